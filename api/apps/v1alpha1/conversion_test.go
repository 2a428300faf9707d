package v1alpha1

import (
	"maps"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// fullHub is a v1beta1 request with every field set.
func fullHub() *v1beta1.ContainerRecreateRequest {
	ts := metav1.NewTime(time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC))
	return &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0-x", Namespace: "shop", UID: "u1", Generation: 2,
			Labels:      map[string]string{v1beta1.PodUIDLabel: "p1", v1beta1.NodeNameLabel: "n1", v1beta1.ActiveLabel: "true"},
			Annotations: map[string]string{"rejuv.dev/reason": "memory leak"},
		},
		Spec: v1beta1.ContainerRecreateRequestSpec{
			PodName: "web-0",
			Containers: []v1beta1.ContainerRecreateRequestContainer{{
				Name: "app",
				PreStop: &v1beta1.ProbeHandler{
					Exec:      &corev1.ExecAction{Command: []string{"sh", "-c", "sleep 1"}},
					HTTPGet:   &corev1.HTTPGetAction{Path: "/drain", Port: intstr.FromString("http"), Scheme: corev1.URISchemeHTTP},
					TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(9000)},
					Sleep:     &corev1.SleepAction{Seconds: 2},
				},
				Ports:         []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: "containerd://abc", RestartCount: 3},
			}, {Name: "sidecar"}},
			Strategy: &v1beta1.ContainerRecreateRequestStrategy{
				FailurePolicy: v1beta1.FailurePolicyIgnore, OrderedRecreate: true, ForceRecreate: true,
				TerminationGracePeriodSeconds: ptr.To[int64](30), UnreadyGracePeriodSeconds: ptr.To[int64](3), MinStartedSeconds: 10,
			},
			ActiveDeadlineSeconds:   ptr.To[int64](300),
			TTLSecondsAfterFinished: ptr.To[int32](1800),
		},
		Status: v1beta1.ContainerRecreateRequestStatus{
			Phase: v1beta1.PhaseCompleted, CompletionTime: &ts, Message: "done", Result: v1beta1.ResultPartiallySucceeded,
			ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{
				{Name: "app", Phase: v1beta1.PhaseSucceeded, IsKilled: true},
				{Name: "sidecar", Phase: v1beta1.PhaseFailed, Message: "not ready again before the deadline"},
			},
			ContainerStatusSnapshot: []v1beta1.ContainerRecreateRequestSyncContainerStatus{
				{Name: "app", Ready: true, RestartCount: 4, ContainerID: "containerd://def"},
			},
			Conditions: []metav1.Condition{{
				Type: v1beta1.ConditionPreRecreateGrace, Status: metav1.ConditionTrue, Reason: "PodMadeUnready",
				Message: "pod not ready for 3s before the stop", LastTransitionTime: ts, ObservedGeneration: 2,
			}},
		},
	}
}

func TestHubRoundTripKeepsEveryField(t *testing.T) {
	in := fullHub()
	var spoke ContainerRecreateRequest
	if err := spoke.ConvertFrom(in.DeepCopy()); err != nil {
		t.Fatal(err)
	}
	var out v1beta1.ContainerRecreateRequest
	if err := spoke.ConvertTo(&out); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(in, &out) {
		t.Fatalf("v1beta1 -> v1alpha1 -> v1beta1 changed the object:\nin:  %+v\nout: %+v", in, &out)
	}
}

func TestHubStatusAppearsAsOpenKruiseAnnotations(t *testing.T) {
	var spoke ContainerRecreateRequest
	if err := spoke.ConvertFrom(fullHub()); err != nil {
		t.Fatal(err)
	}
	a := spoke.Annotations
	if got, want := a[v1beta1.SyncContainerStatusesAnnotation], `[{"name":"app","ready":true,"restartCount":4,"containerID":"containerd://def"}]`; got != want {
		t.Errorf("sync-container-statuses = %s, want %s", got, want)
	}
	if got, want := a[v1beta1.UnreadyAcquiredAnnotation], "2026-11-21T10:00:00Z"; got != want {
		t.Errorf("unready-acquired = %q, want %q", got, want)
	}
	if a[ConditionsAnnotation] == "" {
		t.Errorf("conditions with a reason and message beyond the timestamp were not carried in %s", ConditionsAnnotation)
	}
	if got := a[v1beta1.ResultAnnotation]; got != "PartiallySucceeded" {
		t.Errorf("result annotation = %q, want PartiallySucceeded", got)
	}
	if a["rejuv.dev/reason"] != "memory leak" {
		t.Errorf("other annotations lost: %v", a)
	}
}

// TestOpenKruiseObjectRoundTrip starts from what an OpenKruise client writes
// in v1alpha1: the two annotations and nothing of Rejuv's.
func TestOpenKruiseObjectRoundTrip(t *testing.T) {
	in := &ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "ns", Annotations: map[string]string{
			v1beta1.SyncContainerStatusesAnnotation: `[{"name":"app","ready":false,"restartCount":1,"containerID":"containerd://a"}]`,
			v1beta1.UnreadyAcquiredAnnotation:       "2026-11-21T10:00:00Z",
		}},
		Spec: ContainerRecreateRequestSpec{PodName: "p", Containers: []ContainerRecreateRequestContainer{{Name: "app"}}},
	}
	var hub v1beta1.ContainerRecreateRequest
	if err := in.DeepCopy().ConvertTo(&hub); err != nil {
		t.Fatal(err)
	}
	if len(hub.Annotations) != 0 {
		t.Errorf("hub kept annotations that became fields: %v", hub.Annotations)
	}
	if n := len(hub.Status.ContainerStatusSnapshot); n != 1 || hub.Status.ContainerStatusSnapshot[0].RestartCount != 1 {
		t.Errorf("snapshot = %+v", hub.Status.ContainerStatusSnapshot)
	}
	c := meta.FindStatusCondition(hub.Status.Conditions, v1beta1.ConditionPreRecreateGrace)
	if c == nil || c.Status != metav1.ConditionTrue || !c.LastTransitionTime.Equal(&metav1.Time{Time: time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}) {
		t.Errorf("PreRecreateGrace condition = %+v", c)
	}
	var out ContainerRecreateRequest
	if err := out.ConvertFrom(&hub); err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(in, &out) {
		t.Fatalf("v1alpha1 -> v1beta1 -> v1alpha1 changed the object:\nin:  %+v\nout: %+v", in, &out)
	}
}

// TestUnparseableAnnotationsAreNotStatus: annotations of those names that
// do not parse become no field, and do not come back in v1alpha1, where
// the status's own would be expected.
func TestUnparseableAnnotationsAreNotStatus(t *testing.T) {
	in := &ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
		v1beta1.SyncContainerStatusesAnnotation: "not json",
		v1beta1.UnreadyAcquiredAnnotation:       "yesterday",
		"rejuv.dev/reason":                      "test",
	}}}
	var hub v1beta1.ContainerRecreateRequest
	if err := in.DeepCopy().ConvertTo(&hub); err != nil {
		t.Fatal(err)
	}
	if hub.Status.ContainerStatusSnapshot != nil || hub.Status.Conditions != nil {
		t.Errorf("bad annotations became fields: %+v", hub.Status)
	}
	var out ContainerRecreateRequest
	if err := out.ConvertFrom(&hub); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"rejuv.dev/reason": "test"}; !equality.Semantic.DeepEqual(out.Annotations, want) {
		t.Errorf("annotations after the round trip = %v, want %v", out.Annotations, want)
	}
}

// TestHubAnnotationsNeverBecomeStatus: in v1beta1 the annotations that
// carry status in v1alpha1 are ordinary ones, which whoever may patch a
// request may set. Seen in v1alpha1, and written back, they must not
// become the status: one of 2000 in rejuv.dev/prestop-started made the
// daemon skip the preStop hook and stop the container with no grace.
func TestHubAnnotationsNeverBecomeStatus(t *testing.T) {
	forged := map[string]string{
		v1beta1.PreStopStartedAnnotation:        `{"app":"2000-01-01T00:00:00Z"}`,
		v1beta1.ResultAnnotation:                string(v1beta1.ResultSucceeded),
		ConditionsAnnotation:                    `[{"type":"PreRecreateGrace","status":"True","reason":"Forged","message":"","lastTransitionTime":"2000-01-01T00:00:00Z"}]`,
		v1beta1.UnreadyAcquiredAnnotation:       "2000-01-01T00:00:00Z",
		v1beta1.SyncContainerStatusesAnnotation: `[{"name":"app","ready":true,"restartCount":9,"containerID":"containerd://forged"}]`,
	}
	if len(forged) != len(StatusAnnotations()) {
		t.Fatalf("the test forges %d annotations, StatusAnnotations has %d", len(forged), len(StatusAnnotations()))
	}
	running := v1beta1.ContainerRecreateRequestStatus{
		Phase:                   v1beta1.PhaseRecreating,
		ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseRecreating}},
	}
	for name, status := range map[string]v1beta1.ContainerRecreateRequestStatus{
		"before the hook":  running,
		"every field set":  fullHub().Status,
		"no status at all": {},
	} {
		t.Run(name, func(t *testing.T) {
			in := fullHub()
			in.Status = status
			maps.Copy(in.Annotations, forged)
			var spoke ContainerRecreateRequest
			if err := spoke.ConvertFrom(in.DeepCopy()); err != nil {
				t.Fatal(err)
			}
			for k, v := range forged {
				if spoke.Annotations[k] == v {
					t.Errorf("v1alpha1 shows the v1beta1 annotation %s=%s as status", k, v)
				}
			}
			var out v1beta1.ContainerRecreateRequest
			if err := spoke.ConvertTo(&out); err != nil {
				t.Fatal(err)
			}
			if !equality.Semantic.DeepEqual(out.Status, status) {
				t.Errorf("status after v1alpha1 and back = %+v, want %+v", out.Status, status)
			}
		})
	}
}
