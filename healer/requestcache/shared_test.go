package requestcache

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1alpha1 "github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/test/heap"
)

// runRequest is request i of a policy's scheduled run, completed, as the
// API server gives it to the manager's informer: decoded from JSON, so
// that none of its strings is shared with another request's.
func runRequest(t testing.TB, i int) *appsv1beta1.ContainerRecreateRequest {
	return decode(t, runRequestJSON(t, i))
}

func decode(t testing.TB, data []byte) *appsv1beta1.ContainerRecreateRequest {
	crr := &appsv1beta1.ContainerRecreateRequest{}
	if err := json.Unmarshal(data, crr); err != nil {
		t.Fatal(err)
	}
	return crr
}

// runRequestJSON is runRequest as the API server sends it.
func runRequestJSON(t testing.TB, i int) []byte {
	pod := fmt.Sprintf("web-5c5578b9d8-%05d", i)
	uid := fmt.Sprintf("fc3140a6-beb0-4bdd-822e-%012d", i)
	crr := &appsv1beta1.ContainerRecreateRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps.kruise.io/v1beta1", Kind: "ContainerRecreateRequest"},
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("rolling-%012x", i), Namespace: "shop", UID: types.UID(fmt.Sprintf("21534a62-d688-4fce-b296-%012d", i)),
			ResourceVersion: fmt.Sprint(30000 + i), Generation: 1, CreationTimestamp: metav1.Unix(1_764_553_680, 0),
			Labels: map[string]string{
				appsv1beta1.NodeNameLabel: fmt.Sprintf("node-%d", i%10), appsv1beta1.PodNameLabel: pod, appsv1beta1.PodUIDLabel: uid,
				appsv1beta1.PolicyLabel: "rolling", appsv1beta1.TriggerLabel: "schedule",
			},
			Annotations: map[string]string{
				appsv1beta1.ContainersAnnotation: "app", appsv1beta1.DisruptionChargedAnnotation: "2026-12-01T01:48:00Z",
				appsv1beta1.ReasonAnnotation: "scheduled run of 2026-12-01T01:48:00Z", appsv1beta1.RunAnnotation: "2026-12-01T01:48:00Z",
				appsv1beta1.RequestedAtAnnotation: fmt.Sprintf("2026-12-01T01:48:00.%09dZ", i),
			},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "rejuv.dev/v1alpha1", Kind: "RecreatePolicy", Name: "rolling",
				UID: "f151ec81-7fcd-4338-a99e-9286d048254e", Controller: new(true), BlockOwnerDeletion: new(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "rejuv-healer", Operation: metav1.ManagedFieldsOperationUpdate}},
		},
		Spec: appsv1beta1.ContainerRecreateRequestSpec{
			PodName: pod, ActiveDeadlineSeconds: new(int64(600)), TTLSecondsAfterFinished: new(int32(3600)),
			Containers: []appsv1beta1.ContainerRecreateRequestContainer{{
				Name: "app", Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				StatusContext: &appsv1beta1.ContainerRecreateRequestContainerContext{ContainerID: fmt.Sprintf("containerd://%064x", i), RestartCount: 13},
			}},
			Strategy: &appsv1beta1.ContainerRecreateRequestStrategy{FailurePolicy: appsv1beta1.FailurePolicyFail,
				TerminationGracePeriodSeconds: new(int64(2)), UnreadyGracePeriodSeconds: new(int64(5))},
		},
		Status: appsv1beta1.ContainerRecreateRequestStatus{
			Phase: appsv1beta1.PhaseCompleted, Result: appsv1beta1.ResultSucceeded, CompletionTime: new(metav1.Unix(1_764_553_686, 0)),
			Conditions: []metav1.Condition{{Type: "PreRecreateGrace", Status: metav1.ConditionTrue, ObservedGeneration: 1, Reason: "PodMadeUnready",
				Message: "pod " + pod + " is not ready (KruisePodReady=False); containers are stopped after 5s", LastTransitionTime: metav1.Unix(1_764_553_680, 0)}},
			ContainerRecreateStates: []appsv1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: appsv1beta1.PhaseSucceeded, IsKilled: true}},
			ContainerStatusSnapshot: []appsv1beta1.ContainerRecreateRequestSyncContainerStatus{{Name: "app", Ready: true, RestartCount: 14,
				ContainerID: fmt.Sprintf("containerd://%064x", i+1<<20)}},
		},
	}
	data, err := json.Marshal(crr)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestACachedRequestReadsBackAsTheAPIServerGaveIt: nothing of a request is
// left out but its managedFields, in either version, and an object of
// another kind is left as it is.
func TestACachedRequestReadsBackAsTheAPIServerGaveIt(t *testing.T) {
	s := &sharedValues{}
	for _, crr := range []*appsv1beta1.ContainerRecreateRequest{runRequest(t, 1), runRequest(t, 2), {}} {
		want := crr.DeepCopy()
		want.ManagedFields = nil
		got, err := s.transform(crr)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("request %q read back as %+v (%v), want %+v", crr.Name, got, err, want)
		}
	}
	alpha := &appsv1alpha1.ContainerRecreateRequest{}
	if err := alpha.ConvertFrom(runRequest(t, 3)); err != nil {
		t.Fatal(err)
	}
	alpha.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kruise-daemon"}}
	want := alpha.DeepCopy()
	want.ManagedFields = nil
	if got, err := s.transform(alpha); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("v1alpha1 request read back as %+v (%v), want %+v", got, err, want)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}}}
	if got, err := s.transform(pod); err != nil || got != pod || pod.ManagedFields == nil {
		t.Errorf("a pod came out as %v (%v)", got, err)
	}
}

// TestRequestsOfOneRunShareWhatTheyHoldAlike: two requests of one run
// hold one owners list, strategy, ports list and copy of each label key and
// of their policy, trigger and run, and each keeps its own pod and times.
func TestRequestsOfOneRunShareWhatTheyHoldAlike(t *testing.T) {
	s := &sharedValues{}
	a, b := runRequest(t, 1), runRequest(t, 2)
	s.request(a)
	s.request(b)
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	if &a.OwnerReferences[0] != &b.OwnerReferences[0] || a.Spec.Strategy != b.Spec.Strategy || &a.Spec.Containers[0].Ports[0] != &b.Spec.Containers[0].Ports[0] ||
		a.Spec.TTLSecondsAfterFinished != b.Spec.TTLSecondsAfterFinished {
		t.Error("two requests of one run hold two copies of their owners, strategy, ports or TTL")
	}
	for _, key := range []string{appsv1beta1.PolicyLabel, appsv1beta1.TriggerLabel} {
		if !same(a.Labels[key], b.Labels[key]) {
			t.Errorf("label %s's value %q is held twice", key, a.Labels[key])
		}
	}
	if !same(a.Annotations[appsv1beta1.RunAnnotation], b.Annotations[appsv1beta1.RunAnnotation]) || !same(a.Namespace, b.Namespace) {
		t.Error("the run or the namespace is held twice")
	}
	for ka := range a.Labels {
		for kb := range b.Labels {
			if ka == kb && !same(ka, kb) {
				t.Errorf("label key %s is held twice", ka)
			}
		}
	}
	if a.Labels[appsv1beta1.PodUIDLabel] == b.Labels[appsv1beta1.PodUIDLabel] || a.Spec.PodName == b.Spec.PodName ||
		a.Status.ContainerStatusSnapshot[0].ContainerID == b.Status.ContainerStatusSnapshot[0].ContainerID {
		t.Error("a request's own values were shared")
	}
}

// TestACachedRequestCostsLessThanADecodedOne measures, for 4,000 requests
// of a rolling run over 10 nodes, what the cache keeps per request against
// the request as decoded, managedFields left out (what it kept before).
func TestACachedRequestCostsLessThanADecodedOne(t *testing.T) {
	const n = 4000
	requests := make([][]byte, n)
	for i := range requests {
		requests[i] = runRequestJSON(t, i)
	}
	keptPerRequest := func(keep func(*appsv1beta1.ContainerRecreateRequest)) int64 {
		kept := make([]*appsv1beta1.ContainerRecreateRequest, n)
		before := heap.Live()
		for i := range kept {
			kept[i] = decode(t, requests[i])
			keep(kept[i])
		}
		perRequest := (heap.Live() - before) / n
		runtime.KeepAlive(kept)
		return perRequest
	}
	s := &sharedValues{}
	decoded := keptPerRequest(func(crr *appsv1beta1.ContainerRecreateRequest) { crr.ManagedFields = nil })
	shared := keptPerRequest(s.request)
	// The requests as sent stay on the heap while both are measured.
	runtime.KeepAlive(requests)
	t.Logf("a completed request of a run: %d bytes kept, %d bytes decoded (%.2f)", shared, decoded, float64(shared)/float64(decoded))
	if shared*4 > decoded*3 {
		t.Errorf("the cache keeps %d bytes a request, the decoded request %d: want at most three quarters", shared, decoded)
	}
}
