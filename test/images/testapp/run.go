package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"
)

// shutdownGrace bounds how long in-flight requests (a /control?exit= answer
// among them) may take once testapp has decided to exit.
const shutdownGrace = 2 * time.Second

// run is testapp from flags to exit code. signals carries SIGTERM and SIGINT.
func run(ctx context.Context, o options, log *slog.Logger, signals <-chan os.Signal) int {
	hostname, err := os.Hostname()
	if err != nil {
		log.Error("read hostname", "err", err)
	}
	a := newApp(o, log, hostname)

	if o.startupDelay > 0 {
		log.Info("delaying startup", "delay", o.startupDelay.String())
		delay := time.NewTimer(o.startupDelay)
		for waiting := true; waiting; {
			select {
			case <-delay.C:
				waiting = false
			case sig := <-signals:
				if a.exitOnSignal(sig) {
					return 0
				}
			}
		}
	}

	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		log.Error("listen", "address", o.listen, "err", err)
		return 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ctl *controlFile
	if o.controlFile != "" {
		// Read before serving, so that no probe sees the flags' state when
		// the file says otherwise.
		ctl = &controlFile{path: o.controlFile, log: log, apply: func(c controls) { a.apply(c, "control file") }}
		ctl.poll()
	}
	a.startedAt = time.Now()
	srv := &http.Server{Handler: a.routes(), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("serve", "err", err)
		}
	}()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			log.Error("shut down HTTP server", "err", err)
		}
	}()
	go (&grower{state: a.state, ballast: a.ballast, after: o.growAfter, freeEvery: o.freeEvery}).run(ctx)
	if o.warmUp > 0 {
		go (&warmer{ballast: a.ballast, size: o.warmUp, tau: o.warmUpTime}).run(ctx)
	}
	if ctl != nil {
		go ctl.run(ctx, controlFilePoll)
	}
	var unreadyAfter <-chan time.Time
	if o.unreadyAfter > 0 {
		t := time.NewTimer(o.unreadyAfter)
		defer t.Stop()
		unreadyAfter = t.C
	}
	var exitAfter <-chan time.Time
	if o.exitAfter > 0 {
		t := time.NewTimer(o.exitAfter)
		defer t.Stop()
		exitAfter = t.C
	}
	log.Info("started", "address", ln.Addr().String(), "hostname", hostname, "pid", os.Getpid())

	for {
		select {
		case <-ctx.Done():
			return 0
		case sig := <-signals:
			if a.exitOnSignal(sig) {
				return 0
			}
		case code := <-a.exits:
			return code
		case <-unreadyAfter:
			a.apply(controls{ready: new(false)}, "--unready-after")
		case <-exitAfter:
			log.Info("exiting after --exit-after", "after", o.exitAfter.String(), "code", o.exitCode)
			return o.exitCode
		}
	}
}
