package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestAForgedPolicyReviewCompilesNoMore: a review sent to the policy
// webhook by someone other than the API server has not been through the
// CRD's schema; the webhook refuses what the schema would have (more than
// 16 rules, a module over 64 KiB) before it compiles anything, quickly.
func TestAForgedPolicyReviewCompilesNoMore(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	v := &PolicyValidator{Decoder: admission.NewDecoder(scheme)}
	module := "package x\nimport rego.v1\nrecreate contains c.name if {\n\tsome c in input.containers\n}\n"
	big := strings.Repeat("# padding\n", 700_000) + module
	for _, tt := range []struct {
		name  string
		rules []v1alpha1.Rule
		want  string
	}{
		{"a thousand rules", func() []v1alpha1.Rule {
			var rules []v1alpha1.Rule
			for i := range 1000 {
				rules = append(rules, v1alpha1.Rule{Name: fmt.Sprintf("r%d", i), Rego: module})
			}
			return rules
		}(), "spec.rules: Too many: 1000: must have at most 16 items"},
		{"a 7 MB module", []v1alpha1.Rule{{Name: "big", Rego: big}}, "spec.rules[0].rego: Too long: may not be more than 65536 bytes"},
	} {
		p := &v1alpha1.RecreatePolicy{
			TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "RecreatePolicy"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "forged"},
			Spec:       v1alpha1.RecreatePolicySpec{Rules: tt.rules},
		}
		raw, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp := v.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Create, Namespace: "shop", Name: "forged", Object: runtime.RawExtension{Raw: raw},
		}})
		took := time.Since(start)
		t.Logf("%s: %d bytes refused in %s", tt.name, len(raw), took.Round(time.Millisecond))
		if resp.Allowed || resp.Result == nil || !strings.Contains(resp.Result.Message, tt.want) {
			t.Errorf("%s: allowed %v, %v; want refused with %q", tt.name, resp.Allowed, resp.Result, tt.want)
		}
		if took > 2*time.Second {
			t.Errorf("%s: took %s", tt.name, took)
		}
	}
}
