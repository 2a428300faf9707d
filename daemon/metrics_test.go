package daemon

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// TestRuntimeUpFollowsTheChecks: rejuv_daemon_runtime_up is 0 until a
// runtime is found, 1 while it answers, 0 while it does not.
func TestRuntimeUpFollowsTheChecks(t *testing.T) {
	r := &Runtime{}
	steps := []struct {
		name   string
		client *cri.Client
		err    error
		want   float64
	}{
		{"no runtime found yet", nil, errors.New("no socket"), 0},
		{"found and answering", &cri.Client{}, nil, 1},
		{"not answering", nil, errors.New("deadline exceeded"), 0},
		{"answering again", nil, nil, 1},
	}
	for _, s := range steps {
		r.set(s.client, s.err)
		if got := testutil.ToFloat64(runtimeUp); got != s.want {
			t.Errorf("%s: rejuv_daemon_runtime_up is %v, want %v", s.name, got, s.want)
		}
	}
}
