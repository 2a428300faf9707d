package cli

import (
	"net/http"
	"net/http/pprof"
)

// ProfileHandlers are Go's runtime profiles by path, under /debug/pprof/,
// for a program's metrics endpoint to serve beside /metrics.
func ProfileHandlers() map[string]http.Handler {
	return map[string]http.Handler{
		"/debug/pprof/":        http.HandlerFunc(pprof.Index),
		"/debug/pprof/cmdline": http.HandlerFunc(pprof.Cmdline),
		"/debug/pprof/profile": http.HandlerFunc(pprof.Profile),
		"/debug/pprof/symbol":  http.HandlerFunc(pprof.Symbol),
		"/debug/pprof/trace":   http.HandlerFunc(pprof.Trace),
	}
}
