package daemon

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/go-logr/logr"

	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// runtimeRetry is how often the daemon looks for a runtime while it has none.
// It is also how often a found runtime is checked.
const runtimeRetry = 5 * time.Second

// Runtime finds the container runtime and keeps knowing whether it answers.
// Until one is found the daemon is not ready, and its readiness check says
// which paths were tried.
type Runtime struct {
	Socket, HostRunDir string

	mu     sync.Mutex
	client *cri.Client
	err    error
}

// Start looks for the runtime until it finds one, then checks it
// periodically, until ctx ends.
func (r *Runtime) Start(ctx context.Context) error {
	log := logr.FromContextOrDiscard(ctx).WithName("runtime")
	t := time.NewTicker(runtimeRetry)
	defer t.Stop()
	for {
		r.mu.Lock()
		c := r.client
		r.mu.Unlock()
		if c == nil {
			c, err := cri.Detect(ctx, r.Socket, r.HostRunDir)
			r.set(c, err)
			if err != nil {
				log.Error(err, "no container runtime yet; retrying", "every", runtimeRetry)
			} else {
				log.Info("using container runtime", "runtime", c.Name(), "version", c.Version(), "socket", c.Socket)
			}
		} else if err := c.Check(ctx); err != nil {
			if r.Err() == nil {
				log.Error(err, "container runtime not answering; the daemon is not ready until it does", "socket", c.Socket)
			}
			r.set(c, err)
		} else {
			if r.Err() != nil {
				log.Info("container runtime answers again", "runtime", c.Name(), "version", c.Version(), "socket", c.Socket)
			}
			r.set(c, nil)
		}
		select {
		case <-ctx.Done():
			if c := r.Client(); c != nil {
				_ = c.Close()
			}
			return nil
		case <-t.C:
		}
	}
}

func (r *Runtime) set(c *cri.Client, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c != nil {
		r.client = c
	}
	r.err = err
	up := 0.0
	if r.client != nil && err == nil {
		up = 1
	}
	runtimeUp.Set(up)
}

// Client is the runtime's client, or nil until one is found.
func (r *Runtime) Client() *cri.Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.client
}

// Err is the last check's error, nil when the runtime answered.
func (r *Runtime) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// ReadyCheck is the readiness check: the runtime was found and answered at
// the last check.
func (r *Runtime) ReadyCheck(_ *http.Request) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.err != nil:
		return r.err
	case r.client == nil:
		return errors.New("looking for the container runtime")
	}
	return nil
}
