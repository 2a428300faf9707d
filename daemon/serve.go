package daemon

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/utils/clock"

	"github.com/rejuv-dev/rejuv/daemon/kube"
)

const (
	serverReadHeaderTimeout = 10 * time.Second
	serverShutdownTimeout   = 5 * time.Second
)

// probeHandler serves /healthz (the process answers) and /readyz (the
// container runtime was found and answered at the last check, and the
// caches hold the node's pods and requests; 500 with the reason
// otherwise).
func probeHandler(rt *Runtime, synced *atomic.Bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if err := rt.ReadyCheck(r); err != nil {
			http.Error(w, "runtime: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if !synced.Load() {
			http.Error(w, "caches: still listing the node's pods and ContainerRecreateRequests (or waiting for the API server to serve them)", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("ok"))
	})
	return mux
}

// metricsServer serves reg on /metrics: over HTTPS with a self-signed
// certificate and only to clients authorized to get /metrics when
// --metrics-secure, else plain HTTP.
func metricsServer(o Options, reg *prometheus.Registry, c *kube.Client, log logr.Logger) (*server, error) {
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	mux := http.NewServeMux()
	if !o.MetricsSecure {
		mux.Handle("/metrics", h)
		return listen("metrics", o.MetricsAddr, mux, nil)
	}
	cert, err := selfSignedCertificate(o.NodeName, time.Now())
	if err != nil {
		return nil, fmt.Errorf("metrics certificate: %w", err)
	}
	auth := &metricsAuth{api: c, clock: clock.RealClock{}}
	mux.Handle("/metrics", auth.filter(log.WithName("metrics"), h))
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	return listen("metrics", o.MetricsAddr, mux, func(ln net.Listener) net.Listener { return tls.NewListener(ln, tlsConfig) })
}

// server is an HTTP server on its listener.
type server struct {
	what string
	srv  *http.Server
	ln   net.Listener
}

// listen listens on addr for h, the listener wrapped by wrap if given.
func listen(what, addr string, h http.Handler, wrap func(net.Listener) net.Listener) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", what, addr, err)
	}
	if wrap != nil {
		ln = wrap(ln)
	}
	return &server{what: what, srv: &http.Server{Handler: h, ReadHeaderTimeout: serverReadHeaderTimeout}, ln: ln}, nil
}

// serve serves until ctx ends, then shuts down.
func (s *server) serve(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- s.srv.Serve(s.ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), serverShutdownTimeout)
		defer cancel()
		_ = s.srv.Shutdown(shutdown)
		return nil
	}
}

// closeAll closes the servers' listeners.
func closeAll(servers []*server) {
	for _, s := range servers {
		_ = s.ln.Close()
	}
}
