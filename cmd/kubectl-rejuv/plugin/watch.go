package plugin

import (
	"context"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// watched is a list whose changes wake a follower up.
type watched struct {
	list client.ObjectList
	opts []client.ListOption
}

// follow calls step now, on every change of the watched lists, and at
// least every tick, until step says it is done or fails, or ctx ends.
// step reads the state itself: a watch only says when to read it again,
// so a watch that closes or misses an event costs a tick, nothing more.
func follow(ctx context.Context, c client.WithWatch, lists []watched, tick time.Duration, step func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	changed := make(chan struct{}, 1)
	for _, w := range lists {
		go watchChanges(ctx, c, w, changed)
	}
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		done, err := step(ctx)
		if done || err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-ticker.C:
		}
	}
}

// watchChanges signals changed on every event of a watch of w, starting
// the watch again whenever it ends, until ctx ends.
func watchChanges(ctx context.Context, c client.WithWatch, w watched, changed chan<- struct{}) {
	for ctx.Err() == nil {
		wi, err := c.Watch(ctx, w.list, w.opts...)
		if err != nil {
			// The tick reads the state meanwhile; try again shortly.
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
			continue
		}
		for range wi.ResultChan() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
		wi.Stop()
	}
}
