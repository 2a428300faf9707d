package main

import (
	"log/slog"
	"sync"
)

// state is what flags, /control and the control file all change.
type state struct {
	log *slog.Logger

	mu            sync.Mutex
	ready         bool
	live          bool
	ignoreSigterm bool
	growRate      int64
	growLimit     int64
}

func newState(o options, log *slog.Logger) *state {
	return &state{
		log:           log,
		ready:         o.ready,
		live:          o.live,
		ignoreSigterm: o.ignoreSigterm,
		growRate:      o.growRate,
		growLimit:     o.growLimit,
	}
}

// settings is a copy of the state, taken under the lock.
type settings struct {
	ready         bool
	live          bool
	ignoreSigterm bool
	growRate      int64
	growLimit     int64
}

func (s *state) get() settings {
	s.mu.Lock()
	defer s.mu.Unlock()
	return settings{
		ready:         s.ready,
		live:          s.live,
		ignoreSigterm: s.ignoreSigterm,
		growRate:      s.growRate,
		growLimit:     s.growLimit,
	}
}

// update applies the fields c sets and logs one line per value that changed;
// source says who asked (http, control file) for the reader of the logs.
func (s *state) update(c controls, source string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	setBool(s.log, source, "ready", &s.ready, c.ready)
	setBool(s.log, source, "live", &s.live, c.live)
	setBool(s.log, source, "ignoreSigterm", &s.ignoreSigterm, c.ignoreSigterm)
	setBytes(s.log, source, "growRate", &s.growRate, c.growRate)
	setBytes(s.log, source, "growLimit", &s.growLimit, c.growLimit)
}

func setBool(log *slog.Logger, source, key string, field, to *bool) {
	if to == nil || *to == *field {
		return
	}
	log.Info("state changed", "key", key, "from", *field, "to", *to, "source", source)
	*field = *to
}

func setBytes(log *slog.Logger, source, key string, field, to *int64) {
	if to == nil || *to == *field {
		return
	}
	log.Info("state changed", "key", key, "from", formatBytes(*field), "to", formatBytes(*to), "source", source)
	*field = *to
}
