package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	fakeclient "sigs.k8s.io/controller-runtime/pkg/client/fake"
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

// listRecorder records the pod lists a validator asks for.
type listRecorder struct {
	client.Reader
	lists []client.ListOptions
}

func (r *listRecorder) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := client.ListOptions{}
	o.ApplyOptions(opts)
	r.lists = append(r.lists, o)
	return r.Reader.List(ctx, list, opts...)
}

// TestAForgedPolicyReviewLearnsNothingOfThePods: without a verified caller
// (no --webhook-client-ca), anyone who reaches the webhook may send a
// policy review naming any namespace; the warnings must then say nothing
// the pods of that namespace decide (how many a selector matches, which
// container names they have), and the validator must not read them. With
// a verified caller, the review's namespace is the policy's, and the
// validator reads one bounded page of its pods, saying when it read no
// more.
func TestAForgedPolicyReviewLearnsNothingOfThePods(t *testing.T) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	var pods []client.Object
	for i := range 3 {
		pods = append(pods, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "victim", Name: fmt.Sprintf("db-%d", i), Labels: map[string]string{"app": "db"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "postgres"}}}})
	}
	fake := fakeclient.NewClientBuilder().WithScheme(s).WithObjects(pods...).Build()
	p := &v1alpha1.RecreatePolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: "RecreatePolicy"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "victim", Name: "probe"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector:   metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
			Schedule:   &v1alpha1.Schedule{Cron: "@daily"},
			Containers: []string{"mysql"},
		},
	}
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	review := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: "victim", Name: "probe", Object: runtime.RawExtension{Raw: raw},
	}}
	for _, tt := range []struct {
		name     string
		verified bool
		want     string // a warning; none about pods when empty
	}{
		{"unverified caller", false, ""},
		{"verified caller", true, `spec.containers: "mysql" matches no container of the 3 pods the selector matches now`},
	} {
		reader := &listRecorder{Reader: fake}
		v := &PolicyValidator{Reader: reader, Decoder: admission.NewDecoder(s), VerifiedCallers: tt.verified}
		resp := v.Handle(context.Background(), review)
		if !resp.Allowed {
			t.Fatalf("%s: refused: %v", tt.name, resp.Result)
		}
		var about []string
		for _, w := range resp.Warnings {
			if strings.HasPrefix(w, "spec.containers") {
				about = append(about, w)
			}
		}
		switch {
		case tt.want == "" && (len(about) > 0 || len(reader.lists) > 0):
			t.Errorf("%s: listed pods %d times and warned %q; want no list and no warning about the namespace's pods", tt.name, len(reader.lists), about)
		case tt.want != "" && (len(about) != 1 || about[0] != tt.want):
			t.Errorf("%s: warnings %q, want %q", tt.name, about, tt.want)
		case tt.want != "" && (len(reader.lists) != 1 || reader.lists[0].Limit != maxWarningPods || reader.lists[0].Namespace != "victim"):
			t.Errorf("%s: lists %+v, want one page of at most %d pods of namespace victim", tt.name, reader.lists, maxWarningPods)
		}
	}
}
