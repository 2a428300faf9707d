package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	"github.com/rejuv-dev/rejuv/daemon/executor"
	"github.com/rejuv-dev/rejuv/daemon/kube"
)

// workers is how many passes over requests the daemon runs at once (one
// per pod at most). A container's stop, which may wait for its whole grace
// period, runs outside them.
const workers = 4

// Run starts the daemon (runtime connection, the executor of the node's
// ContainerRecreateRequests, metrics and probes) and returns when ctx ends or
// something fails.
func Run(ctx context.Context, cfg *rest.Config, o Options) error {
	log := logr.FromContextOrDiscard(ctx)
	client, err := kube.New(cfg)
	if err != nil {
		return fmt.Errorf("create the Kubernetes client: %w", err)
	}
	informers, err := kube.NewInformers(client, o.NodeName)
	if err != nil {
		return err
	}
	reg := NewRegistry()
	runtime := &Runtime{Socket: o.CRISocket, HostRunDir: o.HostRunDir}

	// Listen first, so that a taken port fails the start.
	var servers []*server
	var synced atomic.Bool
	probes, err := listen("health probes", o.ProbeAddr, probeHandler(runtime, &synced), nil)
	if err != nil {
		return err
	}
	servers = append(servers, probes)
	if o.MetricsAddr != "0" {
		m, err := metricsServer(o, reg, client, log)
		if err != nil {
			closeAll(servers)
			return err
		}
		servers = append(servers, m)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	run := func(what string, f func(context.Context) error) {
		wg.Go(func() {
			if err := f(ctx); err != nil {
				cancel(fmt.Errorf("%s: %w", what, err))
			}
		})
	}
	for _, s := range servers {
		run(s.what, s.serve)
	}
	recorder := kube.NewRecorder(client, "rejuv-daemon", "rejuv-daemon-"+o.NodeName, log.WithName("events"))
	run("events", func(ctx context.Context) error { recorder.Run(ctx); return nil })
	run("runtime", runtime.Start)
	log.Info("starting daemon", "node", o.NodeName, "criSocket", o.CRISocket, "hostRunDir", o.HostRunDir)
	// Not ready (the caches unsynced) until the API server serves the
	// requests: one restarting at the daemon's start is waited for, not
	// exited on.
	if !waitServed(ctx, client.CheckServed, log, servedRetry, servedRetryMax) || !informers.Run(ctx) {
		cancel(nil)
		wg.Wait()
		return errorOf(ctx)
	}
	synced.Store(true)
	e := &executor.Executor{Store: informers, Live: client, Status: client, Runtime: runtime, NodeName: o.NodeName, Clock: clock.RealClock{}, Recorder: recorder}
	run("executor", func(ctx context.Context) error {
		return e.Run(ctx, executor.Sources{Pods: informers.Pods, Requests: informers.Requests}, workers)
	})
	<-ctx.Done()
	wg.Wait()
	return errorOf(ctx)
}

// servedRetry is the first wait before asking the API server again whether
// it serves the requests; each wait doubles, up to servedRetryMax.
const (
	servedRetry    = 500 * time.Millisecond
	servedRetryMax = 10 * time.Second
)

// waitServed asks check until it passes, true, or ctx ends, false. An API
// server restarting, unreachable for a while or not serving the
// CustomResourceDefinitions yet (its discovery lags its start) is no reason
// to exit: the kubelet would only start the daemon again, later and later
// in its back-off. Each new error is logged, with what the user can do.
func waitServed(ctx context.Context, check func(context.Context) error, log logr.Logger, first, limit time.Duration) bool {
	var last string
	for wait := first; ; wait = min(2*wait, limit) {
		err := check(ctx)
		if err == nil {
			if last != "" {
				log.Info("the API server serves ContainerRecreateRequests")
			}
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if err.Error() != last {
			log.Error(err, "cannot start the caches yet; asking the API server again", "upTo", limit)
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
}

// errorOf is why ctx ended, nil for the caller's own end (a signal).
func errorOf(ctx context.Context) error {
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
