package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// Containerd is a containerd of its own, with no kubelet, for tests that
// drive the CRI by hand (the kubelet removes sandboxes it did not create)
// or stop and restart the runtime.
type Containerd struct {
	cfg  Config
	proc *Process
}

// StartContainerd starts a containerd with its root, state and socket in
// dir (keep dir short: the socket path must fit in a sockaddr_un). It is
// root-only, like the cluster.
func StartContainerd(ctx context.Context, dir string) (*Containerd, error) {
	base, err := DefaultConfig()
	if err != nil {
		return nil, err
	}
	cfg := Config{Dir: dir, CacheDir: base.CacheDir, Runtime: base.Runtime, RuntimeBuildDir: base.RuntimeBuildDir, Tools: base.Tools, Out: base.Out}
	if err := ensureRuntime(ctx, cfg); err != nil {
		return nil, err
	}
	if err := ensureTools(ctx, &cfg); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.logDir(), 0o755); err != nil {
		return nil, fmt.Errorf("start containerd in %s: %w", dir, err)
	}
	c := &Containerd{cfg: cfg}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Socket is its CRI socket.
func (c *Containerd) Socket() string { return c.cfg.CRISocket() }

// Start starts it again after Stop.
func (c *Containerd) Start(ctx context.Context) error {
	sp, err := containerdSpec(c.cfg.FirstNode())
	if err != nil {
		return err
	}
	p, err := startProcess(c.cfg.logDir(), sp)
	if err != nil {
		return err
	}
	c.proc = p
	return p.waitReady(ctx, startTimeout, criReady(c.Socket()))
}

// Stop stops the containerd process; its containers and shims keep running,
// as when a runtime restarts on a real node.
func (c *Containerd) Stop() error {
	if c.proc == nil {
		return errors.New("containerd was not started")
	}
	return c.proc.Stop(stopGrace)
}

// Close removes every pod sandbox, stops containerd and unmounts what it
// mounted below its directory.
func (c *Containerd) Close(ctx context.Context) error {
	var errs []error
	if c.proc != nil && c.proc.Alive() {
		ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if _, err := removeSandboxes(ctx, c.Socket()); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, c.proc.Stop(stopGrace))
	}
	errs = append(errs, unmountUnder(c.cfg.Dir))
	return errors.Join(errs...)
}
