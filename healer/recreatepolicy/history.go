package recreatepolicy

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/healer/planner"
)

// history remembers when the manager first saw each container not ready,
// for the rules' notReadySince. It is lost when the manager restarts; the
// rules then report no data until they see the container again.
type history struct {
	mu            sync.Mutex
	notReadySince map[planner.ContainerKey]time.Time
}

// observe records the pod's containers and returns when each candidate
// was first seen not ready (zero while ready).
func (h *history) observe(pod *corev1.Pod, now time.Time) map[string]time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.notReadySince == nil {
		h.notReadySince = map[planner.ContainerKey]time.Time{}
	}
	out := map[string]time.Time{}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, st := range list {
			key := planner.ContainerKey{Pod: pod.UID, Container: st.Name}
			if st.Ready || st.State.Running == nil {
				delete(h.notReadySince, key)
				continue
			}
			since, ok := h.notReadySince[key]
			if !ok {
				since = now
				h.notReadySince[key] = since
			}
			out[st.Name] = since
		}
	}
	return out
}

// forget drops what is known of pods that are gone.
func (h *history) forget(keep map[types.UID]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for key := range h.notReadySince {
		if !keep[key.Pod] {
			delete(h.notReadySince, key)
		}
	}
}

// seed records the pod's not-ready containers as the manager would have
// seen them had it watched the pod all along: not ready since the later of
// the container's start and the pod's ContainersReady turning False. A
// preview, which sees the pod once, estimates notReadySince so.
func (h *history) seed(pod *corev1.Pod) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.notReadySince == nil {
		h.notReadySince = map[planner.ContainerKey]time.Time{}
	}
	var flipped time.Time
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.ContainersReady && c.Status != corev1.ConditionTrue {
			flipped = c.LastTransitionTime.Time
		}
	}
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, st := range list {
			if st.Ready || st.State.Running == nil {
				continue
			}
			since := st.State.Running.StartedAt.Time
			if flipped.After(since) {
				since = flipped
			}
			h.notReadySince[planner.ContainerKey{Pod: pod.UID, Container: st.Name}] = since
		}
	}
}
