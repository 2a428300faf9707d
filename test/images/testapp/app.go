package main

import (
	"log/slog"
	"os"
	"time"
)

// app is one testapp process: its state, held memory, metrics and the exit
// requested of it.
type app struct {
	log       *slog.Logger
	state     *state
	ballast   *ballast
	metrics   *metrics
	hostname  string
	startedAt time.Time
	// exits carries exit codes asked for by a control; run ends the process.
	exits chan int
}

func newApp(o options, log *slog.Logger, hostname string) *app {
	a := &app{
		log:      log,
		state:    newState(o, log),
		ballast:  &ballast{log: log},
		hostname: hostname,
		exits:    make(chan int, 1),
	}
	a.metrics = newMetrics(a.ballast.heldBytes)
	return a
}

// apply carries out controls from source: state first, then freeing, then
// exiting, so that "growRate=0&free=true" does not grow again after the free.
func (a *app) apply(c controls, source string) {
	a.state.update(c, source)
	if c.free {
		a.ballast.free()
	}
	if c.exit != nil {
		a.log.Info("exit requested", "code", *c.exit, "source", source)
		select {
		case a.exits <- *c.exit:
		default: // an exit is already on its way
		}
	}
}

// exitOnSignal says whether sig should end the process.
func (a *app) exitOnSignal(sig os.Signal) bool {
	if sig == os.Interrupt {
		a.log.Info("exiting on signal", "signal", sig.String())
		return true
	}
	if a.state.get().ignoreSigterm {
		a.log.Info("ignoring signal", "signal", sig.String())
		return false
	}
	a.log.Info("exiting on signal", "signal", sig.String())
	return true
}

// stateView is the JSON answer of /state and /control.
type stateView struct {
	Ready         bool   `json:"ready"`
	Live          bool   `json:"live"`
	IgnoreSigterm bool   `json:"ignoreSigterm"`
	GrowRate      int64  `json:"growRate"`
	GrowLimit     int64  `json:"growLimit"`
	HeldBytes     int64  `json:"heldBytes"`
	StartedAt     string `json:"startedAt"`
	PID           int    `json:"pid"`
	Hostname      string `json:"hostname"`
}

func (a *app) view() stateView {
	s := a.state.get()
	return stateView{
		Ready:         s.ready,
		Live:          s.live,
		IgnoreSigterm: s.ignoreSigterm,
		GrowRate:      s.growRate,
		GrowLimit:     s.growLimit,
		HeldBytes:     a.ballast.heldBytes(),
		StartedAt:     a.startedAt.Format(time.RFC3339Nano),
		PID:           os.Getpid(),
		Hostname:      a.hostname,
	}
}
