package pods

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

// BackOffWindow is how soon after the kubelet last restarted a container
// an exit of it meets the kubelet's crash-loop back-off (10 s, doubling
// with each restart inside the window, up to 5 min), whoever stopped it.
// After a container has run this long since its last restart, the
// kubelet starts it again at once.
const BackOffWindow = 10 * time.Minute

// BackOffAhead says whether the kubelet will hold the restart of the
// container whose status is cs in its crash-loop back-off: the instance
// that ended (cs.State.Terminated) was itself a restart by the kubelet
// (restartCount at least 1) and ran less than BackOffWindow. It returns
// how long that instance ran. A container not reported ended yet says
// nothing.
func BackOffAhead(cs *corev1.ContainerStatus) (time.Duration, bool) {
	if cs == nil || cs.RestartCount < 1 || cs.State.Terminated == nil {
		return 0, false
	}
	t := cs.State.Terminated
	ran := t.FinishedAt.Sub(t.StartedAt.Time)
	return ran, ran < BackOffWindow
}
