package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
)

// routes serves testapp's endpoints, each counted in the metrics under its own
// path; anything else is counted as "other".
func (a *app) routes() http.Handler {
	mux := http.NewServeMux()
	handle := func(pattern, path string, h http.HandlerFunc) {
		mux.Handle(pattern, a.metrics.instrument(path, h))
	}
	handle("/{$}", "/", a.serveRoot)
	handle("/healthz", "/healthz", a.serveProbe("live", func(s settings) bool { return s.live }))
	handle("/readyz", "/readyz", a.serveProbe("ready", func(s settings) bool { return s.ready }))
	handle("/state", "/state", a.serveState)
	handle("/control", "/control", a.serveControl)
	mux.Handle("/metrics", a.metrics.instrument("/metrics", a.metrics.handler()))
	handle("/", "other", http.NotFound)
	return mux
}

func (a *app) serveRoot(w http.ResponseWriter, _ *http.Request) {
	fmt.Fprintf(w, "testapp %s\n", a.hostname)
}

// serveProbe answers 200 while ok holds of the state, else 503.
func (a *app) serveProbe(what string, ok func(settings) bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		if !ok(a.state.get()) {
			http.Error(w, "not "+what, http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, what)
	}
}

func (a *app) serveState(w http.ResponseWriter, _ *http.Request) {
	a.writeState(w)
}

// serveControl applies the query (or form) parameters as controls and answers
// with the resulting state. GET is allowed too, for curl from inside a pod.
func (a *app) serveControl(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "use GET or POST", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	keys := make([]string, 0, len(r.Form))
	for k := range r.Form {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var kvs []keyValue
	for _, k := range keys {
		for _, v := range r.Form[k] {
			kvs = append(kvs, keyValue{k, v})
		}
	}
	c, err := parseControls(kvs)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.apply(c, "http")
	a.writeState(w)
}

func (a *app) writeState(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(a.view()); err != nil {
		a.log.Error("write state", "err", err)
	}
}
