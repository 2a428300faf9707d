package v1alpha1

import (
	"encoding/json"
	"reflect"
	"testing"

	kruise "github.com/openkruise/kruise-api/apps/v1alpha1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestWireCompatibleWithOpenKruise: a request of this version, every
// field set, read into OpenKruise's published Go type
// (github.com/openkruise/kruise-api) and written back, is the same request:
// OpenKruise's clients and tools read and write Rejuv's requests without
// losing anything, and the other way round. The one exception is the
// preStop sleep action, which OpenKruise's type does not have.
func TestWireCompatibleWithOpenKruise(t *testing.T) {
	hub := fullHub()
	hub.Spec.Containers[0].PreStop.Sleep = nil
	ours := &ContainerRecreateRequest{}
	if err := ours.ConvertFrom(hub); err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(ours)
	if err != nil {
		t.Fatal(err)
	}
	theirs := &kruise.ContainerRecreateRequest{}
	if err := json.Unmarshal(raw, theirs); err != nil {
		t.Fatalf("OpenKruise's type does not read Rejuv's request: %v", err)
	}
	if theirs.Spec.PodName != "web-0" || len(theirs.Spec.Containers) != 2 || theirs.Spec.Containers[0].StatusContext.ContainerID != "containerd://abc" ||
		theirs.Spec.Strategy.FailurePolicy != kruise.ContainerRecreateRequestFailurePolicyIgnore || theirs.Status.Phase != kruise.ContainerRecreateRequestCompleted ||
		!theirs.Status.ContainerRecreateStates[0].IsKilled {
		t.Errorf("OpenKruise's type reads %+v", theirs)
	}
	again, err := json.Marshal(theirs)
	if err != nil {
		t.Fatal(err)
	}
	var was, now map[string]any
	if err := json.Unmarshal(raw, &was); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(again, &now); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(was, now) {
		t.Errorf("a round trip through OpenKruise's type changed the request:\nwas %s\nnow %s", raw, again)
	}

	for ours, theirs := range map[string]string{
		v1beta1.PodUIDLabel:                     kruise.ContainerRecreateRequestPodUIDKey,
		v1beta1.NodeNameLabel:                   kruise.ContainerRecreateRequestNodeNameKey,
		v1beta1.ActiveLabel:                     kruise.ContainerRecreateRequestActiveKey,
		v1beta1.SyncContainerStatusesAnnotation: kruise.ContainerRecreateRequestSyncContainerStatusesKey,
		v1beta1.UnreadyAcquiredAnnotation:       kruise.ContainerRecreateRequestUnreadyAcquiredKey,
	} {
		if ours != theirs {
			t.Errorf("Rejuv's key %q is OpenKruise's %q", ours, theirs)
		}
	}
	if GroupVersion.String() != kruise.GroupVersion.String() {
		t.Errorf("group version %s, OpenKruise's %s", GroupVersion, kruise.GroupVersion)
	}
}
