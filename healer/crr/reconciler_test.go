package crr

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

var (
	recreating = func(app, sidecar v1beta1.ContainerRecreateRequestPhase) *v1beta1.ContainerRecreateRequestStatus {
		return &v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhaseRecreating, ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{
			{Name: "app", Phase: app, IsKilled: app != v1beta1.PhasePending}, {Name: "sidecar", Phase: sidecar},
		}}
	}
	readyNode = func(t *testing.T) string { return createNode(t, corev1.ConditionTrue, time.Now()) }
)

func TestDeadlineFailsUnfinishedContainers(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	start := time.Now()
	crr := createCRR(t, pod, "deadline", func(s *v1beta1.ContainerRecreateRequestSpec) { s.ActiveDeadlineSeconds = ptr.To[int64](3) },
		recreating(v1beta1.PhaseSucceeded, v1beta1.PhaseRecreating))

	got := waitCRR(t, crr, 10*time.Second, "completed by the deadline", retired)
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("completed after %s, before the 3s deadline", took)
	}
	if got.Status.Message != "activeDeadlineSeconds (3s) passed" {
		t.Errorf("message = %q", got.Status.Message)
	}
	app, side := got.Status.ContainerRecreateStates[0], got.Status.ContainerRecreateStates[1]
	if app.Phase != v1beta1.PhaseSucceeded || !app.IsKilled {
		t.Errorf("app = %+v, want its Succeeded kept", app)
	}
	if side.Phase != v1beta1.PhaseFailed || side.Message != "not recreated: activeDeadlineSeconds (3s) passed" {
		t.Errorf("sidecar = %+v, want Failed with the deadline", side)
	}
	if got.Status.Result != v1beta1.ResultPartiallySucceeded || got.Status.CompletionTime == nil {
		t.Errorf("result %q completionTime %v, want PartiallySucceeded and a time", got.Status.Result, got.Status.CompletionTime)
	}
}

func TestContainersWithoutStateFailWhenEnded(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	crr := createCRR(t, pod, "nostate", func(s *v1beta1.ContainerRecreateRequestSpec) { s.ActiveDeadlineSeconds = ptr.To[int64](3) }, nil)
	got := waitCRR(t, crr, 10*time.Second, "completed", retired)
	if n := len(got.Status.ContainerRecreateStates); n != 2 {
		t.Fatalf("states = %+v, want one Failed per container", got.Status.ContainerRecreateStates)
	}
	if got.Status.Result != v1beta1.ResultFailed {
		t.Errorf("result = %q, want Failed", got.Status.Result)
	}
}

func TestTTLDeletesFinishedRequest(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	crr := createCRR(t, pod, "ttl", func(s *v1beta1.ContainerRecreateRequestSpec) { s.TTLSecondsAfterFinished = ptr.To[int32](2) }, nil)
	done := metav1.Now()
	writeStatus(t, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
		s.Phase, s.CompletionTime = v1beta1.PhaseCompleted, &done
		s.ContainerRecreateStates = []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseSucceeded}, {Name: "sidecar", Phase: v1beta1.PhaseSucceeded}}
	})
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		err := admin.Get(ctx, client.ObjectKeyFromObject(crr), &v1beta1.ContainerRecreateRequest{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("not deleted after its TTL: %v", err)
	}
	// completionTime has one-second resolution.
	if took := time.Since(done.Time); took < time.Second {
		t.Errorf("deleted %s after completion, before ttlSecondsAfterFinished 2", took)
	}
}

func TestPodDeletedEndsRequest(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	crr := createCRR(t, pod, "podgone", nil, recreating(v1beta1.PhaseRecreating, v1beta1.PhasePending))
	if err := admin.Delete(context.Background(), pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	got := waitCRR(t, crr, 10*time.Second, "ended after the pod's deletion", retired)
	// Even without a grace period the API server writes the pod with a
	// deletionTimestamp before it removes it: the controller may see it
	// being deleted, or gone.
	if msg := got.Status.Message; msg != "pod web was deleted before its containers were recreated" && msg != "pod is being deleted" {
		t.Errorf("message = %q", msg)
	}
	// Retired without its pod: the completion is announced on the request
	// and counted all the same.
	waitEvent(t, pod.Namespace, "ContainerRecreateRequest", crr.Name, "Warning RecreateCompleted: completed: Failed: "+got.Status.Message)
	waitMetric(t, func() float64 {
		return testutil.ToFloat64(crrCompleted.WithLabelValues(pod.Namespace, v1beta1.SourceManual, string(v1beta1.ResultFailed)))
	}, 1)
}

func TestPodReplacedEndsRequest(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	old := pod.DeepCopy()
	old.UID = "00000000-0000-0000-0000-000000000001"
	crr := createCRR(t, old, "replaced", nil, recreating(v1beta1.PhaseRecreating, v1beta1.PhasePending))
	got := waitCRR(t, crr, 10*time.Second, "ended for a replaced pod", retired)
	if !strings.Contains(got.Status.Message, "pod web was replaced") {
		t.Errorf("message = %q", got.Status.Message)
	}
}

func TestLostNodeEndsRequestAfterGrace(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	// node returns the node's name and since when it is lost, when the
	// test knows it: a NotReady node's condition says since when (a whole
	// second, as the API server keeps it); a deleted node is lost from
	// when the controller first misses it, after the request is created.
	tests := []struct {
		name string
		node func(t *testing.T) (string, time.Time)
		want string
	}{
		{"NotReady", func(t *testing.T) (string, time.Time) {
			since := time.Now().Truncate(time.Second)
			return createNode(t, corev1.ConditionFalse, since), since
		}, "is NotReady (KubeletNotReady) for more than 2s"},
		{"deleted", func(*testing.T) (string, time.Time) { return "deleted-node", time.Time{} }, "node deleted-node was deleted for more than 2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			node, lostSince := tt.node(t)
			pod := createPod(t, newNamespace(t), node, false)
			if lostSince.IsZero() {
				lostSince = time.Now()
			}
			crr := createCRR(t, pod, "lost", nil, recreating(v1beta1.PhaseRecreating, v1beta1.PhasePending))
			got := waitCRR(t, crr, 15*time.Second, "ended for a lost node", retired)
			if took := time.Since(lostSince); took < testNodeLostGrace {
				t.Errorf("ended %s after the node was lost, before the %s grace", took, testNodeLostGrace)
			}
			if !strings.Contains(got.Status.Message, tt.want) {
				t.Errorf("message = %q, want it to contain %q", got.Status.Message, tt.want)
			}
			for _, s := range got.Status.ContainerRecreateStates {
				if s.Phase != v1beta1.PhaseFailed {
					t.Errorf("container %s = %s, want Failed", s.Name, s.Phase)
				}
			}
		})
	}
}

func TestMissingDaemonIsReported(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	crr := createCRR(t, pod, "orphan", nil, nil)
	want := "no daemon has picked up this request within 2s; is rejuv-daemon running on node " + pod.Spec.NodeName + "?"
	got := waitCRR(t, crr, 10*time.Second, "reported as not picked up", func(c *v1beta1.ContainerRecreateRequest) bool {
		return c.Status.Message == want
	})
	if got.Status.Phase != "" {
		t.Errorf("phase = %q, want it left for the daemon", got.Status.Phase)
	}
	waitEvent(t, pod.Namespace, "ContainerRecreateRequest", crr.Name, "Warning NotPickedUp: "+want)
}

func TestUnreadyGraceHoldsPodOutOfServiceUntilCompletion(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), true)
	waitPodReady(t, pod, corev1.ConditionTrue) // given by PodReadinessReconciler

	crr := createCRR(t, pod, "grace", func(s *v1beta1.ContainerRecreateRequestSpec) {
		s.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](3)}
	}, nil)
	got := waitCRR(t, crr, 10*time.Second, "holding the pod unready", func(c *v1beta1.ContainerRecreateRequest) bool {
		return meta.IsStatusConditionTrue(c.Status.Conditions, v1beta1.ConditionPreRecreateGrace)
	})
	waitPodReady(t, pod, corev1.ConditionFalse)
	if c := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionPreRecreateGrace); !strings.Contains(c.Message, "containers are stopped after 3s") {
		t.Errorf("PreRecreateGrace message = %q", c.Message)
	}

	now := metav1.Now()
	writeStatus(t, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
		s.Phase, s.CompletionTime = v1beta1.PhaseCompleted, &now
		s.ContainerRecreateStates = []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseSucceeded}, {Name: "sidecar", Phase: v1beta1.PhaseSucceeded}}
		s.Result = v1beta1.ResultSucceeded
	})
	waitCRR(t, crr, 10*time.Second, "retired", retired)
	waitPodReady(t, pod, corev1.ConditionTrue)
}

func TestPodWithoutGateIsNotTouched(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	crr := createCRR(t, pod, "nogate", func(s *v1beta1.ContainerRecreateRequestSpec) {
		s.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](3)}
		s.ActiveDeadlineSeconds = ptr.To[int64](3)
	}, recreating(v1beta1.PhaseRecreating, v1beta1.PhasePending))
	got := waitCRR(t, crr, 10*time.Second, "completed", retired)
	c := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionPreRecreateGrace)
	if c == nil || c.Status != metav1.ConditionFalse || c.Reason != "NoReadinessGate" || !strings.Contains(c.Message, "pod web has no readiness gate KruisePodReady") || !strings.Contains(c.Message, "unready grace of 3s is not kept") {
		t.Errorf("PreRecreateGrace for a pod without the readiness gate: %+v; want False, NoReadinessGate, saying so", c)
	}
	waitEvent(t, pod.Namespace, "ContainerRecreateRequest", crr.Name, "Warning NoReadinessGate: pod web has no readiness gate KruisePodReady")
	waitEvent(t, pod.Namespace, "Pod", pod.Name, "Warning NoReadinessGate")
	if s := podReadyStatus(t, pod); s != "" {
		t.Errorf("pod got %s=%s without the gate", PodReadyCondition, s)
	}
}

func TestCompletionIsAnnouncedAndCounted(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	crr := createCRR(t, pod, "counted", func(*v1beta1.ContainerRecreateRequestSpec) {}, nil)
	ns := pod.Namespace
	// The metric has no pod labels, so the namespace (unique per test) tells this request apart.
	waitMetric(t, func() float64 { return testutil.ToFloat64(crrCreated.WithLabelValues(ns, v1beta1.SourceManual)) }, 1)

	writeStatus(t, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
		*s = *recreating(v1beta1.PhaseRecreating, v1beta1.PhasePending)
	})
	waitEvent(t, ns, "ContainerRecreateRequest", crr.Name, "Normal RecreateStarted: recreating containers app,sidecar of pod web (manual)")
	waitEvent(t, ns, "Pod", pod.Name, "Normal RecreateStarted")

	now := metav1.Now()
	writeStatus(t, crr, func(s *v1beta1.ContainerRecreateRequestStatus) {
		s.Phase, s.CompletionTime = v1beta1.PhaseCompleted, &now
		s.ContainerRecreateStates = []v1beta1.ContainerRecreateRequestContainerRecreateState{
			{Name: "app", Phase: v1beta1.PhaseSucceeded}, {Name: "sidecar", Phase: v1beta1.PhaseFailed, Message: "new container never became ready"},
		}
		s.Result = v1beta1.ResultPartiallySucceeded
	})
	waitCRR(t, crr, 10*time.Second, "retired", retired)
	for _, kind := range []struct{ kind, name string }{{"ContainerRecreateRequest", crr.Name}, {"Pod", pod.Name}} {
		waitEvent(t, ns, kind.kind, kind.name, "Normal ContainerRecreate: container app: Succeeded")
		waitEvent(t, ns, kind.kind, kind.name, "Warning ContainerRecreate: container sidecar: Failed: new container never became ready")
		waitEvent(t, ns, kind.kind, kind.name, "Warning RecreateCompleted: completed: PartiallySucceeded")
	}
	waitMetric(t, func() float64 {
		return testutil.ToFloat64(crrCompleted.WithLabelValues(ns, v1beta1.SourceManual, string(v1beta1.ResultPartiallySucceeded)))
	}, 1)
}

func waitMetric(t *testing.T, get func() float64, want float64) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return get() == want, nil
	})
	if err != nil {
		t.Fatalf("metric = %v, want %v", get(), want)
	}
}

// reconcilerBehind is a Reconciler whose cache holds cached for every
// object of its type (missing, for nil) and is right about the rest; its
// Reader is the API server.
func reconcilerBehind[T any, P interface {
	*T
	client.Object
	DeepCopyInto(*T)
}](t *testing.T, resource string, cached P) *Reconciler {
	t.Helper()
	behind, err := client.NewWithWatch(env.Config, client.Options{Scheme: admin.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	r := &Reconciler{
		Client: interceptor.NewClient(behind, interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			out, ok := obj.(P)
			switch {
			case !ok:
				return c.Get(ctx, key, obj, opts...)
			case cached == nil:
				return apierrors.NewNotFound(corev1.Resource(resource), key.Name)
			default:
				cached.DeepCopyInto(out)
				return nil
			}
		}}),
		Reader: admin, Recorder: events.NewFakeRecorder(100),
	}
	r.setDefaults()
	return r
}

// TestNodeLostInTheCacheOnlyEndsNothing: a controller whose cache still
// shows the node NotReady for longer than the grace, or deleted, after it
// came back ends no request: it confirms with the API server first.
func TestNodeLostInTheCacheOnlyEndsNothing(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	node := readyNode(t)
	pod := createPod(t, newNamespace(t), node, false)
	crr := createCRR(t, pod, "node-behind", nil, recreating(v1beta1.PhaseRecreating, v1beta1.PhasePending))
	lost := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}
	lost.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady",
		LastTransitionTime: metav1.NewTime(time.Now().Add(-time.Hour))}}
	for name, cached := range map[string]*corev1.Node{"NotReady for an hour": lost, "deleted": nil} {
		r := reconcilerBehind(t, "nodes", cached)
		r.NodeLostGrace = time.Second
		if cached == nil {
			// The cache has missed the node for longer than the grace.
			r.nodeGoneSince = map[string]time.Time{node: time.Now().Add(-time.Hour)}
		}
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(crr)}); err != nil {
			t.Fatalf("cache with the node %s: %v", name, err)
		}
		got := &v1beta1.ContainerRecreateRequest{}
		if err := admin.Get(context.Background(), client.ObjectKeyFromObject(crr), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase == v1beta1.PhaseCompleted {
			t.Errorf("cache with the node %s: the request ended (%s) though the node is Ready", name, got.Status.Message)
		}
	}
}

// TestPodMissingFromTheCacheEndsNothing: a controller whose cache has not
// seen the pod yet (just created, or the cache behind) ends no request: it
// confirms with the API server before failing a request for a deleted or
// replaced pod.
func TestPodMissingFromTheCacheEndsNothing(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), false)
	crr := createCRR(t, pod, "behind", nil, recreating(v1beta1.PhaseRecreating, v1beta1.PhasePending))
	older := pod.DeepCopy()
	older.UID = "00000000-0000-0000-0000-000000000002"
	for name, cached := range map[string]*corev1.Pod{"missing": nil, "an older incarnation": older} {
		r := reconcilerBehind(t, "pods", cached)
		if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(crr)}); err != nil {
			t.Fatalf("cache with the pod %s: %v", name, err)
		}
		got := &v1beta1.ContainerRecreateRequest{}
		if err := admin.Get(context.Background(), client.ObjectKeyFromObject(crr), got); err != nil {
			t.Fatal(err)
		}
		if got.Status.Phase == v1beta1.PhaseCompleted {
			t.Errorf("cache with the pod %s: the request ended (%s) though the pod exists", name, got.Status.Message)
		}
	}
}

// TestDeletedRequestReleasesItsPod: a request deleted while it holds its
// pod out of service (by hand, or with its policy) puts the pod back in
// service; the pod is never left NotReady by a request that is gone.
func TestDeletedRequestReleasesItsPod(t *testing.T) {
	needsAPIServer(t)
	t.Parallel()
	pod := createPod(t, newNamespace(t), readyNode(t), true)
	waitPodReady(t, pod, corev1.ConditionTrue)
	crr := createCRR(t, pod, "dropped", func(s *v1beta1.ContainerRecreateRequestSpec) {
		s.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](3)}
	}, nil)
	waitPodReady(t, pod, corev1.ConditionFalse)
	if err := admin.Delete(context.Background(), crr); err != nil {
		t.Fatal(err)
	}
	waitPodReady(t, pod, corev1.ConditionTrue)
}
