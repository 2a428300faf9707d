package main

import (
	"strings"
	"testing"
	"time"
)

// TestReadOptions: the defaults, a replayed seed, and each bad value
// refused naming its variable.
func TestReadOptions(t *testing.T) {
	now := time.Date(2026, 11, 29, 22, 0, 0, 123, time.UTC)
	for _, tc := range []struct {
		name           string
		duration, seed string
		wantDuration   time.Duration
		wantSeed       int64
		wantErr        string
	}{
		{name: "defaults", wantDuration: 30 * time.Minute, wantSeed: now.UnixNano() % 1_000_000_000},
		{name: "replayed", duration: "5m", seed: "42", wantDuration: 5 * time.Minute, wantSeed: 42},
		{name: "not a duration", duration: "five", wantErr: "SOAK_DURATION"},
		{name: "too short", duration: "10s", wantErr: "SOAK_DURATION=10s: must be between"},
		{name: "too long", duration: "48h", wantErr: "SOAK_DURATION=48h0m0s: must be between"},
		{name: "not a seed", seed: "x1", wantErr: "SOAK_SEED"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SOAK_DURATION", tc.duration)
			t.Setenv("SOAK_SEED", tc.seed)
			t.Setenv("SOAK_EVIDENCE", "")
			o, err := readOptions("/repo", now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.duration != tc.wantDuration || o.seed != tc.wantSeed || !strings.HasPrefix(o.evidence, "/repo/.cache/soak/") {
				t.Errorf("got %+v, want duration %s, seed %d, evidence under /repo/.cache/soak", o, tc.wantDuration, tc.wantSeed)
			}
		})
	}
}
