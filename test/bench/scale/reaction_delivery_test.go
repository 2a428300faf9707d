package scale

import (
	"context"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// deliveries is the benchmark's own watch of the reaction's pods: when
// each pod first arrived with its app container not ready. The time from
// the benchmark's write to that arrival is what the API server takes to
// hand a change to a watcher, the manager's informer as well as this
// one; a reaction is at least that, the manager's part, and the same
// again for the request to reach the stand-in's watch.
type deliveries struct {
	mu sync.Mutex
	at map[types.UID]time.Time
}

// watchDeliveries watches the pods of ns from version until ctx ends,
// watching again from the last version seen whenever a watch ends.
func watchDeliveries(ctx context.Context, ns, version string) *deliveries {
	d := &deliveries{at: map[types.UID]time.Time{}}
	go func() {
		for ctx.Err() == nil {
			w, err := fleet.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: version, AllowWatchBookmarks: true})
			if err != nil {
				time.Sleep(100 * time.Millisecond)
				continue
			}
			for ev := range w.ResultChan() {
				p, ok := ev.Object.(*corev1.Pod)
				if !ok {
					continue
				}
				version = p.ResourceVersion
				if ev.Type == watch.Modified && appUnready(p) {
					d.arrived(p.UID, time.Now())
				}
			}
			w.Stop()
		}
	}()
	return d
}

// arrived keeps the first arrival of the pod.
func (d *deliveries) arrived(uid types.UID, t time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.at[uid]; !ok {
		d.at[uid] = t
	}
}

// of is when the pod's change arrived, if it did.
func (d *deliveries) of(uid types.UID) (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.at[uid]
	return t, ok
}

// appUnready is whether the pod's app container is not ready, as the
// benchmark's write leaves it.
func appUnready(p *corev1.Pod) bool {
	cs := pods.ContainerStatus(p, "app")
	return cs != nil && !cs.Ready
}
