package crr

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestADaemonAtWorkKeepsItsRequestOnANodeThatReadsLost: in the soak's hour
// (seed 12), a node's kubelet paused past the node grace came back; before
// the node reported Ready again the daemon began a request for one of its
// pods and stopped the container, and the manager ended the request Failed
// ("no daemon can finish the request") from the node's Ready condition
// alone; the kubelet started the container again 11 s later, a restart no
// request reported. While a daemon writes to a request, a node that reads
// lost does not end it; once the daemon is silent for the grace, it does,
// and a container already stopped is not called "not recreated".
func TestADaemonAtWorkKeepsItsRequestOnANodeThatReadsLost(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	ctx := context.Background()
	node := readyNode(t)
	pod := createPod(t, newNamespace(t), node, false)
	crr := createCRR(t, pod, "daemon-at-work", nil, recreating(v1beta1.PhaseRecreating, v1beta1.PhasePending))
	// The node reads NotReady for an hour: lost, were it not for the
	// daemon.
	n := &corev1.Node{}
	if err := admin.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		t.Fatal(err)
	}
	n.Status.Conditions[0].Status = corev1.ConditionUnknown
	n.Status.Conditions[0].Reason = "NodeStatusUnknown"
	n.Status.Conditions[0].LastTransitionTime = metav1.NewTime(time.Now().Add(-time.Hour))
	if err := admin.Status().Update(ctx, n); err != nil {
		t.Fatal(err)
	}
	// The daemon writes its progress every quarter of the grace, for
	// three graces.
	var lastWrite time.Time
	for i := range 12 {
		time.Sleep(testNodeLostGrace / 4)
		writeStatus(t, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
			if s.Phase == v1beta1.PhaseCompleted {
				t.Fatalf("ended (%s) while the daemon wrote to it (write %d of 12)", s.Message, i+1)
			}
			s.ContainerStatusSnapshot = []v1beta1.ContainerRecreateRequestSyncContainerStatus{{Name: "app", RestartCount: int32(i)}}
		})
		lastWrite = time.Now()
	}
	// Silent, the daemon is kept for the grace from its last write...
	for time.Since(lastWrite) < testNodeLostGrace/2 {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			t.Fatal(err)
		}
		if completed(cur) {
			t.Fatalf("ended (%s) %s after the daemon's last write, within the %s grace", cur.Status.Message, time.Since(lastWrite), testNodeLostGrace)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// ...and then the node's loss ends the request.
	got := waitCRR(t, crr, 15*time.Second, "ended once the daemon went silent", retired)
	want := "node " + node + " is NotReady (NodeStatusUnknown) for more than 2s; no daemon can finish the request"
	if got.Status.Message != want {
		t.Errorf("message = %q, want %q", got.Status.Message, want)
	}
	app, side := got.Status.ContainerRecreateStates[0], got.Status.ContainerRecreateStates[1]
	if app.Phase != v1beta1.PhaseFailed || !strings.HasPrefix(app.Message, "stopped, its new instance not seen: node ") {
		t.Errorf("app (stopped by the daemon) = %+v, want Failed, stopped and its new instance not seen", app)
	}
	if side.Phase != v1beta1.PhaseFailed || !strings.HasPrefix(side.Message, "not recreated: node ") {
		t.Errorf("sidecar (not stopped) = %+v, want Failed, not recreated", side)
	}
}
