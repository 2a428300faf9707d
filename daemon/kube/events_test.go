package kube

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestRecorderTakesAPodThatIsGone: an event related to a pod that is gone
// (a nil *Pod, which is not a nil interface) is recorded on its request
// without a related object, and one on the pod that is gone is dropped;
// neither panics.
func TestRecorderTakesAPodThatIsGone(t *testing.T) {
	r := NewRecorder(nil, "rejuv-daemon", "rejuv-daemon-node-a", logr.Discard())
	crr := &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r1", UID: "crr-uid"}}
	var gone *corev1.Pod
	noPanic(t, "an event on the request related to the pod", func() {
		r.Eventf(crr, gone, corev1.EventTypeWarning, "RecreateFailed", "Recreate", "pod %s is gone", "web-0")
	})
	noPanic(t, "an event on the pod", func() {
		r.Eventf(gone, crr, corev1.EventTypeWarning, "RecreateFailed", "Recreate", "pod %s is gone", "web-0")
	})
	if len(r.queue) != 1 {
		t.Fatalf("%d events queued, want the one on the request", len(r.queue))
	}
	e := <-r.queue
	if e.Regarding.Name != "r1" || e.Regarding.Kind != "ContainerRecreateRequest" || e.Related != nil {
		t.Errorf("regarding %+v related %+v, want the request and no related object", e.Regarding, e.Related)
	}
}

// noPanic runs record and fails the test if it panics.
func noPanic(t *testing.T, what string, record func()) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("%s: panicked: %v", what, p)
		}
	}()
	record()
}

// TestALongNoteIsCutSayingSo: a note longer than the events API's bound
// (an error a preStop hook echoed, say) is cut to it at a character
// boundary and says that it was cut and from how many bytes, as the
// manager's events do, never silently.
func TestALongNoteIsCutSayingSo(t *testing.T) {
	r := NewRecorder(nil, "rejuv-daemon", "rejuv-daemon-node-a", logr.Discard())
	crr := &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r1", UID: "crr-uid"}}
	echoed := strings.Repeat("é", 2000)
	r.Eventf(crr, nil, corev1.EventTypeWarning, "PreStopFailed", "Recreate", "preStop hook failed: %s", echoed)
	e := <-r.queue
	if len(e.Note) > v1alpha1.MaxNoteLength || !utf8.ValidString(e.Note) || !strings.HasSuffix(e.Note, "(truncated from 4021 bytes)") {
		t.Errorf("note of %d bytes, valid UTF-8 %v, ending %q; want at most %d bytes, valid, saying it was truncated from 4021 bytes",
			len(e.Note), utf8.ValidString(e.Note), e.Note[max(len(e.Note)-40, 0):], v1alpha1.MaxNoteLength)
	}
}
