package recreatepolicy

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// recurringListed is how many held pods the MemoryRecurring condition
// names.
const recurringListed = 5

// reportRecurring sets the MemoryRecurring condition from a pass's rule
// decisions: True, naming the pods, while limits.memoryRecurrence holds
// some back. The message names no elapsed time, so that it changes only
// when the pods held do.
func reportRecurring(p *v1alpha1.RecreatePolicy, decisions []planned) {
	var held []string
	for _, e := range decisions {
		d := e.decision
		if d.Outcome == v1alpha1.OutcomeRecurring {
			held = append(held, fmt.Sprintf("%s (%s, %s)", d.Pod, strings.Join(d.Containers, ","), d.Trigger))
		}
	}
	if len(held) == 0 {
		setCondition(p, v1alpha1.ConditionMemoryRecurring, false, v1alpha1.ReasonNoRecurrence, "")
		return
	}
	msg := fmt.Sprintf("%d pods held back, their memory rules matching again within limits.memoryRecurrence of recreating them: %s",
		len(held), strings.Join(held[:min(len(held), recurringListed)], ", "))
	if len(held) > recurringListed {
		msg += fmt.Sprintf(" and %d more", len(held)-recurringListed)
	}
	setCondition(p, v1alpha1.ConditionMemoryRecurring, true, v1alpha1.ReasonLeakRecurred, msg)
}

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
