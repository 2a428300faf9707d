package plugin

import (
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// graceSeconds is --unready-grace in the API's seconds.
func (r *restart) graceSeconds() int64 {
	return int64(r.unreadyGrace / time.Second)
}

// warnUngated warns, when an unready grace is asked for, of the pods
// without the readiness gate: Rejuv cannot take them out of their
// Services before stopping their containers, so clients may see failed
// requests. It says how pods get the gate.
func warnUngated(w io.Writer, t *target, targets []corev1.Pod, grace int64) {
	if grace == 0 {
		return
	}
	var ungated []string
	for i := range targets {
		if !pods.HasReadinessGate(&targets[i]) {
			ungated = append(ungated, targets[i].Name)
		}
	}
	if len(ungated) == 0 {
		return
	}
	which, them, their := "pod "+ungated[0]+" has", "it", "its"
	if len(targets) > 1 {
		which, them, their = fmt.Sprintf("%d of the %d pods (%s) have", len(ungated), len(targets), strings.Join(ungated, ", ")), "them", "their"
	}
	fix := "recreating " + them + " gives " + them + " the gate"
	if t.owner != nil {
		fix = fmt.Sprintf("kubectl rollout restart %s gives them the gate", t)
	}
	fmt.Fprintf(w, "warning: %s no readiness gate %s: Rejuv cannot take %s out of %s Services before stopping containers, and clients may see requests fail. "+
		"A pod gets the gate when it is created while a RecreatePolicy selects it, or in a namespace labelled %s=enabled; %s.\n",
		which, v1beta1.PodReadyCondition, them, their, v1beta1.ReadinessGateNamespaceLabel, fix)
}
