package recreatepolicy

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// reportRecurrence sends the Warning events of a candidate that
// limits.memoryRecurrence holds back, on the policy and the pod, at the
// first pass that holds it (the holds of the passes before say which).
func (r *Reconciler) reportRecurrence(p *v1alpha1.RecreatePolicy, c *planner.PodCandidate, dec v1alpha1.Decision) {
	if r.state.heldBy(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, c.Pod.Name, c.Trigger.Kind) == v1alpha1.OutcomeRecurring {
		return
	}
	r.eventf(p, c.Pod, corev1.EventTypeWarning, "MemoryRecurring", "Recreate",
		"pod %s held back: %s (%s)", c.Pod.Name, dec.Message, c.Reason)
	r.eventf(c.Pod, p, corev1.EventTypeWarning, "MemoryRecurring", "Recreate",
		"RecreatePolicy %s holds back %s: %s (%s)", p.Name, strings.Join(c.Containers, ","), dec.Message, c.Reason)
}
