package initiallist

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

// TestOnlyTheInitialListIsSkipped: a pod of the informer's initial list is
// not passed on; a pod created later, an update, a delete and a generic
// event are.
func TestOnlyTheInitialListIsSkipped(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}}
	if Skipped.Create(event.CreateEvent{Object: pod, IsInInitialList: true}) {
		t.Error("a pod of the initial list was passed on")
	}
	if !Skipped.Create(event.CreateEvent{Object: pod}) {
		t.Error("a pod created after the initial list was skipped")
	}
	if !Skipped.Update(event.UpdateEvent{ObjectOld: pod, ObjectNew: pod}) || !Skipped.Delete(event.DeleteEvent{Object: pod}) || !Skipped.Generic(event.GenericEvent{Object: pod}) {
		t.Error("an update, delete or generic event was skipped")
	}
}
