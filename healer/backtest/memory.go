package backtest

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/healer/workingset"
	"github.com/rejuv-dev/rejuv/policy"
)

// windows are the replay's working set windows, one per container of each
// pod, kept as the manager's sampler keeps them; they are the memory
// history the replay's passes read.
type windows struct {
	interval, span time.Duration
	tracks         map[types.UID]map[string]*workingset.Track
	// sampled is the time of the last sample taken.
	sampled time.Time
}

func newWindows(interval, span time.Duration) *windows {
	return &windows{interval: interval, span: span, tracks: map[types.UID]map[string]*workingset.Track{}}
}

// track is the window of a pod's container, new at its first sample.
func (w *windows) track(pod types.UID, container string) *workingset.Track {
	byName := w.tracks[pod]
	if byName == nil {
		byName = map[string]*workingset.Track{}
		w.tracks[pod] = byName
	}
	t := byName[container]
	if t == nil {
		t = workingset.NewTrack(w.interval, w.span)
		byName[container] = t
	}
	return t
}

// forget drops the windows of a pod that is gone.
func (w *windows) forget(pod types.UID) { delete(w.tracks, pod) }

// Memory is the window of a pod's container, or nil with why there is
// none.
func (w *windows) Memory(pod *corev1.Pod, container string) (*policy.MemoryWindow, string) {
	if t := w.tracks[pod.UID][container]; t != nil {
		if m := t.Summary(); m != nil {
			return m, ""
		}
	}
	return nil, fmt.Sprintf("history has no working set of the container up to %s", w.sampled.UTC().Format(time.RFC3339))
}

// Describe says what the windows hold at most, for reasons.
func (w *windows) Describe() string {
	return fmt.Sprintf("windows of %s sampled every %s from history", w.span, w.interval)
}
