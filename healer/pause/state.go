package pause

import (
	"fmt"
	"strings"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// State is the emergency stop as the manager last read it.
type State struct {
	// Paused is whether the ConfigMap exists (and is not being deleted).
	Paused bool
	// EndRequests is whether requests a daemon has begun are ended too
	// (v1alpha1.PauseEnd), rather than let finish.
	EndRequests bool
	// Cause says that Rejuv is paused, by what and why: what a request
	// ended or refused for the pause quotes. Message adds what becomes of
	// the requests a daemon has begun, and any value of the ConfigMap it
	// could not read: what a policy's status quotes. Both are "" when
	// not paused.
	Cause, Message string
	// Version is the ConfigMap's resourceVersion.
	Version string
}

// Of reads the state cm says: nil is not paused. A value it cannot read
// still pauses, in the safer way (requests begun finish), and the message
// names the value.
func Of(cm *corev1.ConfigMap) State {
	if cm == nil || cm.DeletionTimestamp != nil {
		return State{}
	}
	st := State{Paused: true, Version: cm.ResourceVersion}
	var b strings.Builder
	fmt.Fprintf(&b, "%s by ConfigMap %s/%s", v1alpha1.PausedMessage, cm.Namespace, cm.Name)
	if reason := strings.TrimSpace(cm.Data[v1alpha1.PauseReasonKey]); reason != "" {
		fmt.Fprintf(&b, ": %q", cut(reason, v1alpha1.MaxPauseReasonBytes))
		if len(reason) > v1alpha1.MaxPauseReasonBytes {
			fmt.Fprintf(&b, " (%s cut at %d of its %d bytes)", v1alpha1.PauseReasonKey, v1alpha1.MaxPauseReasonBytes, len(reason))
		}
	}
	st.Cause = b.String()
	switch requests := cm.Data[v1alpha1.PauseRequestsKey]; requests {
	case "", v1alpha1.PauseFinish:
		b.WriteString("; requests a daemon has begun finish")
	case v1alpha1.PauseEnd:
		st.EndRequests = true
		b.WriteString("; every request not ended is ended")
	default:
		fmt.Fprintf(&b, "; requests a daemon has begun finish (%s is %q, not %s or %s)",
			v1alpha1.PauseRequestsKey, cut(requests, 64), v1alpha1.PauseFinish, v1alpha1.PauseEnd)
	}
	st.Message = b.String()
	return st
}

// cut is s to at most n bytes, whole runes only.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n]
	for len(s) > 0 && !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}
