package memshapes

import (
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestAYoungWindowsLeakIsRecreatedWithinMinutes replays the quick start's
// leak (docs/quickstart.md: half a MiB a second towards a 400Mi limit,
// judged from 90 s and 3 samples) as metrics-server feeds it: a sample
// every 30 s, each up to 30 s old (the kubelet's and metrics-server's own
// intervals), so that a young window holds few samples, unevenly spaced
// in what they saw. In every replay the rule recreates the container
// within 4 minutes of its start, before 90% of its limit: the quick start
// waits 8 minutes from the pod's creation, metrics-server's first figure
// taking about a minute. A pace test that wants more than a few samples
// can tell fails here, where the catalogue's hour-long windows do not see
// it.
func TestAYoungWindowsLeakIsRecreatedWithinMinutes(t *testing.T) {
	s := Shape{Name: "quick-start-leak", What: "leaks half a MiB a second", Leak: true, Limit: 400 * Mi, For: 15 * time.Minute,
		Bytes: sum(flat(20*Mi), leak(1800*Mi, 0), noise(Mi))}
	params := map[string]apiextensionsv1.JSON{
		"minObservation": {Raw: []byte(`"90s"`)}, "minSamples": {Raw: []byte(`3`)}, "horizon": {Raw: []byte(`"30m"`)},
	}
	// Up to 30 s old, drawn from the seed and the sample's time.
	lag := func(seed uint64, at time.Time) time.Duration {
		return time.Duration(mix(uint64(at.Unix())^seed<<40) % uint64(30*time.Second))
	}
	var latest time.Duration
	for seed := range uint64(50) {
		o := replayWith(t, s, seed, params, lag)
		if !o.Recreated || o.Age > 4*time.Minute || float64(o.Bytes) >= limitFraction*float64(s.Limit) {
			t.Errorf("seed %d: %s; want recreated within 4m, before %.0f%% of its limit (reason %q)", seed, o.String(s), 100*limitFraction, o.Reason)
		}
		t.Logf("seed %d: %s", seed, o.Age)
		latest = max(latest, o.Age)
	}
	t.Logf("recreated after %s at the latest", latest)
}
