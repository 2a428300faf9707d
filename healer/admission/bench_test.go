package admission

import (
	"context"
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps"
)

// BenchmarkAdmitCRR measures the in-process cost of admitting one request:
// the mutating webhook (pod read from an in-memory client, checks, patch
// computed) and the patch applied as the API server would. The
// SubjectAccessReview, a round trip to the API server, is not included.
//
//	go test -run '^$' -bench BenchmarkAdmitCRR ./healer/admission
func BenchmarkAdmitCRR(b *testing.B) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		b.Fatal(err)
	}
	if err := apps.AddToScheme(s); err != nil {
		b.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1"}, Spec: podSpec(), Status: runningStatus()}
	reader := fake.NewClientBuilder().WithScheme(s).WithObjects(pod).Build()
	decoder := admission.NewDecoder(s)
	mutator := &CRRMutator{Reader: reader, Decoder: decoder}

	crr := newCRR("shop", "bench", "app", "sidecar")
	crr.TypeMeta = metav1.TypeMeta{APIVersion: "apps.kruise.io/v1beta1", Kind: "ContainerRecreateRequest"}
	raw, err := json.Marshal(crr)
	if err != nil {
		b.Fatal(err)
	}
	request := func(obj []byte) admission.Request {
		return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Create, Namespace: "shop", Name: "bench", Object: runtime.RawExtension{Raw: obj},
		}}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		m := mutator.Handle(ctx, request(raw))
		if !m.Allowed {
			b.Fatalf("mutation denied: %v", m.Result)
		}
		ops, err := json.Marshal(m.Patches)
		if err != nil {
			b.Fatal(err)
		}
		patch, err := jsonpatch.DecodePatch(ops)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := patch.Apply(raw); err != nil {
			b.Fatal(err)
		}
	}
}
