package crr

import (
	"context"
	"testing"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestARequestWrittenMeanwhileIsLookedAtAgain: a pass whose copy of the
// request is behind (the daemon wrote the request meanwhile) loses its
// write to the API server's conflict. It leaves the daemon's write as it
// is and looks at the request again shortly, without an error: an error
// would be logged as the controller's failure and backed off, and the
// daemon writes a request's status often while it recreates.
func TestARequestWrittenMeanwhileIsLookedAtAgain(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	crr := createCRR(t, pod, "written-meanwhile", nil, nil)
	behind := &v1beta1.ContainerRecreateRequest{}
	if err := admin.Get(context.Background(), client.ObjectKeyFromObject(crr), behind); err != nil {
		t.Fatal(err)
	}
	writeStatus(t, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
		*s = *recreating(v1beta1.PhaseRecreating, v1beta1.PhasePending)
	})

	r := reconcilerBehind(t, "containerrecreaterequests", behind)
	// The copy behind has not been picked up and is old enough: the pass
	// has a message to write.
	r.PickupTimeout = time.Nanosecond
	res, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(crr)})
	if err != nil {
		t.Fatalf("a pass whose write conflicted with the daemon's returned %v; want a prompt look again", err)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > time.Second {
		t.Errorf("a pass whose write conflicted asks to look again after %s; want within a second", res.RequeueAfter)
	}
	got := &v1beta1.ContainerRecreateRequest{}
	if err := admin.Get(context.Background(), client.ObjectKeyFromObject(crr), got); err != nil {
		t.Fatal(err)
	}
	// The premise: the pass's copy was behind the API server's.
	if got.ResourceVersion == behind.ResourceVersion {
		t.Fatalf("the request's resourceVersion is still %s: the daemon's write did not happen", got.ResourceVersion)
	}
	if got.Status.Phase != v1beta1.PhaseRecreating || got.Status.Message != "" {
		t.Errorf("status %+v; want the daemon's write (phase %s, no message) kept", got.Status, v1beta1.PhaseRecreating)
	}
}
