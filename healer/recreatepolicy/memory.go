package recreatepolicy

import (
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/policy"
)

// MemoryHistory is the working set history of containers (the manager's
// sampler).
type MemoryHistory interface {
	// Memory is the window of a pod's container, or nil with why there
	// is none.
	Memory(pod *corev1.Pod, container string) (*policy.MemoryWindow, string)
	// Describe says what the windows hold at most.
	Describe() string
}

// The no-data signals of the memory rules, which the history explains.
const (
	signalMemory        = "memory"
	signalMemoryHistory = "memory.history"
)

// memoryNotes keeps, for one pod, what the history said of each container,
// to explain a rule's no data.
type memoryNotes struct {
	missing map[string]string
	windows map[string]*policy.MemoryWindow
}

// read is the container's window from h, noting why there is none.
func (n *memoryNotes) read(h MemoryHistory, pod *corev1.Pod, container string) *policy.MemoryWindow {
	if h == nil {
		return nil
	}
	w, why := h.Memory(pod, container)
	if n.windows == nil {
		n.missing, n.windows = map[string]string{}, map[string]*policy.MemoryWindow{}
	}
	if w == nil {
		n.missing[container] = why
	}
	n.windows[container] = w
	return w
}

// reason explains a rule's no data when it is the memory signal's.
func (n *memoryNotes) reason(h MemoryHistory, nd policy.NoData) string {
	switch {
	case nd.Signal != signalMemory && nd.Signal != signalMemoryHistory:
		return ""
	case h == nil:
		return "the manager samples no memory source (--memory-source=none)"
	case nd.Signal == signalMemory:
		if why := n.missing[nd.Container]; why != "" {
			return why
		}
		return ""
	}
	w := n.windows[nd.Container]
	if w == nil {
		return ""
	}
	return fmt.Sprintf("the window holds %d samples over %s; the manager keeps %s", w.Samples, durationText(w.WindowSeconds), h.Describe())
}

// durationText writes seconds as a Go duration without zero units:
// 1h, 20m, 1m30s.
func durationText(sec float64) string {
	s := (time.Duration(sec) * time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
