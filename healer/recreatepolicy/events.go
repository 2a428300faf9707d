package recreatepolicy

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// eventf records an event with its note cut to the events API's bound,
// saying so: the API refuses a longer note, and a rule's error or reason
// may be of any size, so the event would be lost.
func (r *Reconciler) eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.Recorder.Eventf(regarding, related, eventtype, reason, action, "%s", v1alpha1.Truncate(fmt.Sprintf(note, args...), v1alpha1.MaxNoteLength))
}
