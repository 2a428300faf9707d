package admission

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// TestRequestReadsItsPodFromTheCacheFirst: the request webhook admits
// from the cache's copy of the pod without asking the API server; a pod
// the cache lacks, or a cached copy that would refuse the request (the
// cache a moment behind a pod just scheduled or a container just
// started), is read from the API server, whose answer alone admits or
// refuses; before the cache has synced, every pod is read from the API
// server.
func TestRequestReadsItsPodFromTheCacheFirst(t *testing.T) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apps.AddToScheme} {
		if err := add(s); err != nil {
			t.Fatal(err)
		}
	}
	current := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1"}, Spec: podSpec(), Status: runningStatus()}
	unscheduled := current.DeepCopy()
	unscheduled.Spec.NodeName, unscheduled.Status = "", corev1.PodStatus{Phase: corev1.PodPending}
	notStarted := current.DeepCopy()
	notStarted.Status.ContainerStatuses[0].ContainerID = ""
	finished := current.DeepCopy()
	finished.Status.Phase = corev1.PodSucceeded
	// A lifecycle past pods.MaxLifecycleBytes (a long postStart) is left
	// out of the cache's copy, which names it: the preStop the request
	// copies is read from the API server.
	longPostStart := current.DeepCopy()
	longPostStart.Spec.Containers[0].Lifecycle.PostStart = &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", strings.Repeat("w", pods.MaxLifecycleBytes)}}}
	longPreStop := current.DeepCopy()
	longPreStop.Spec.Containers[0].Lifecycle.PreStop.Exec.Command = []string{"sh", "-c", strings.Repeat("d", pods.MaxLifecycleBytes)}

	cases := []struct {
		name          string
		cached, live  *corev1.Pod // nil: no such pod
		synced        bool
		wantLiveReads int
		refusal       string // empty: admitted from the live pod's or the cache's copy
	}{
		{name: "cached copy admits", cached: current, live: current, synced: true, wantLiveReads: 0},
		{name: "pod not in the cache yet", live: current, synced: true, wantLiveReads: 1},
		{name: "cached copy not scheduled yet", cached: unscheduled, live: current, synced: true, wantLiveReads: 1},
		{name: "cached copy's container not started yet", cached: notStarted, live: current, synced: true, wantLiveReads: 1},
		{name: "cache not synced", cached: current, live: current, synced: false, wantLiveReads: 1},
		{name: "refused by the API server's copy", cached: finished, live: finished, synced: true, wantLiveReads: 1, refusal: "the pod has finished (phase Succeeded)"},
		{name: "no such pod", synced: true, wantLiveReads: 1, refusal: "no such pod in namespace shop"},
		{name: "cached copy trimmed of its lifecycle", cached: pods.Trim(longPostStart), live: longPostStart, synced: true, wantLiveReads: 1},
		{name: "preStop past its bound", cached: pods.Trim(longPreStop), live: longPreStop, synced: true, wantLiveReads: 1,
			refusal: "spec.containers[0].preStop: Forbidden: container app's lifecycle.preStop is 4110 bytes, more than the 4096 a request copies"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			build := func(pod *corev1.Pod) client.WithWatch {
				b := fake.NewClientBuilder().WithScheme(s)
				if pod != nil {
					b = b.WithObjects(pod.DeepCopy())
				}
				return b.Build()
			}
			var liveReads atomic.Int32
			live := interceptor.NewClient(build(tc.live), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
				liveReads.Add(1)
				return c.Get(ctx, key, obj, opts...)
			}})
			m := &CRRMutator{
				Cache:  &PodCache{Reader: build(tc.cached), Synced: func() bool { return tc.synced }},
				Reader: live, Decoder: admission.NewDecoder(s),
			}
			crr := newCRR("shop", "r", "app")
			crr.TypeMeta = metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "ContainerRecreateRequest"}
			raw, err := json.Marshal(crr)
			if err != nil {
				t.Fatal(err)
			}
			resp := m.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Create, Namespace: "shop", Name: "r", Object: runtime.RawExtension{Raw: raw},
			}})
			if n := int(liveReads.Load()); n != tc.wantLiveReads {
				t.Errorf("%d reads of the pod from the API server, want %d", n, tc.wantLiveReads)
			}
			if tc.refusal != "" {
				if resp.Allowed || resp.Result == nil || !strings.Contains(resp.Result.Message, tc.refusal) {
					t.Errorf("got allowed=%v %+v, want refused with %q", resp.Allowed, resp.Result, tc.refusal)
				}
				return
			}
			if !resp.Allowed {
				t.Fatalf("refused: %+v", resp.Result)
			}
			patched := false
			for _, op := range resp.Patches {
				if strings.Contains(op.Path, "statusContext") || strings.Contains(op.Path, "spec/containers") {
					patched = patched || strings.Contains(mustJSON(t, op.Value), "containerd://app1")
				}
			}
			if !patched {
				t.Errorf("the admitted request does not record the running container containerd://app1: %+v", resp.Patches)
			}
			if !strings.Contains(mustJSON(t, resp.Patches), `"drain"`) {
				t.Errorf("the admitted request does not carry the container's preStop: %+v", resp.Patches)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
