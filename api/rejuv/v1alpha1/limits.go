package v1alpha1

import (
	"fmt"
	"unicode/utf8"
)

// The bounds of what the policy controller writes in a policy's status and
// on its requests, from values a tenant controls (a rule's reason, an
// error that echoes a rule's value, a request's message, the pods a run
// restarts). Each is at most the schema's bound on the field, so that a
// status is never refused for its size.
const (
	// MaxMessageLength bounds a condition's message: metav1.Condition's
	// own bound (its maxLength).
	MaxMessageLength = 32768
	// MaxReasonLength bounds a decision's reason and message, a run's
	// message, a rule's no data reason and a request's rejuv.dev/reason
	// annotation.
	MaxReasonLength = 1024
	// MaxBaselineBytes bounds status.run.baseline, as the bytes of its
	// keys and values: a run whose baseline would be larger is not
	// started (Halted, reason RunTooLarge). At a container per pod that is
	// about 7,000 pods.
	MaxBaselineBytes = 512 << 10
	// MaxNoteLength bounds an event's note: the events API's own bound.
	MaxNoteLength = 1024
)

// Truncate returns s when it is at most limit bytes long, else its start
// cut at a character boundary and a note that says it was truncated and
// from how many bytes, limit bytes in all. Bytes bound characters, which
// the schema counts, from above.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	note := fmt.Sprintf("... (truncated from %d bytes)", len(s))
	cut := max(limit-len(note), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + note
}
