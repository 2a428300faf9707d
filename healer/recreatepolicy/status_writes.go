package recreatepolicy

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// statusWrites remembers, per policy, the resourceVersion its last status
// write returned, so that a pass can tell whether the cached policy it
// started from already has that write.
//
// A pass writes the status only when it says something new: in a busy
// namespace every pod's change starts a pass, and a write each time was
// most of the manager's API requests at thousands of pods. A pass whose
// only change is lastEvaluationTime writes it once an evaluation interval
// (so the time is at most one interval old, as with a quiet namespace's
// periodic passes).
type statusWrites struct {
	mu      sync.Mutex
	written map[types.NamespacedName]string
}

// needed says whether the pass must write p's status, computed from
// original as read from the cache. It puts back the written
// lastEvaluationTime when it is the only change and is younger than
// interval. It always writes when the cache has not caught up with the
// pass's own last write: the status there may differ from original's.
func (w *statusWrites) needed(original, p *v1alpha1.RecreatePolicy, interval time.Duration, now time.Time) bool {
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	w.mu.Lock()
	last, wrote := w.written[key]
	w.mu.Unlock()
	if wrote && last != original.ResourceVersion {
		return true
	}
	was, is := original.Status.LastEvaluationTime, p.Status.LastEvaluationTime
	if was != nil && is != nil && now.Sub(was.Time) < interval {
		p.Status.LastEvaluationTime = was
		if equality.Semantic.DeepEqual(original.Status, p.Status) {
			return false
		}
		p.Status.LastEvaluationTime = is
		return true
	}
	return !equality.Semantic.DeepEqual(original.Status, p.Status)
}

// wrote records the resourceVersion the policy's status write returned.
func (w *statusWrites) wrote(p *v1alpha1.RecreatePolicy) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written == nil {
		w.written = map[types.NamespacedName]string{}
	}
	w.written[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = p.ResourceVersion
}

// forget drops what is known of a deleted policy.
func (w *statusWrites) forget(key types.NamespacedName) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.written, key)
}
