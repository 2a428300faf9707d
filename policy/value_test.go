package policy

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// viaJSON is what the simple way gives: encoding/json, then OPA's decoder.
func viaJSON(t *testing.T, v any) ast.Value {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	x, err := ast.ValueFromReader(strings.NewReader(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestToValueMatchesJSON(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	cases := map[string]any{
		"realistic pod": policytest.Pod(7, now),
		"restarted pod": policytest.Pod(11, now),
		"empty pod":     &corev1.Pod{},
		"quantities":    corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1.5Gi"), corev1.ResourceCPU: resource.MustParse("0.25")},
		"int or string": []intstr.IntOrString{intstr.FromInt32(8080), intstr.FromString("http")},
		"times":         []any{metav1.NewTime(now), metav1.Time{}, metav1.NewMicroTime(now.Add(123456 * time.Microsecond)), &metav1.Time{}},
		"duration":      metav1.Duration{Duration: 90 * time.Second},
		"bytes":         []byte("secret"),
		"nil slice and map": struct {
			A []string
			M map[string]int
		}{},
		"omitempty and inline": struct {
			metav1.TypeMeta `json:",inline"`
			N               int     `json:"n,omitempty"`
			P               *string `json:"p,omitempty"`
			Q               *string `json:"q"`
			F               float64 `json:"f"`
		}{TypeMeta: metav1.TypeMeta{Kind: "X"}, F: 0.5},
		"generic maps": map[string]any{"a": []any{1, "x", true, nil, 2.5}, "b": map[string]any{"c": int64(-3)}},
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ToValue(v)
			if err != nil {
				t.Fatal(err)
			}
			if want := viaJSON(t, v); got.Compare(want) != 0 {
				t.Errorf("ToValue differs from the JSON round trip:\n got %v\nwant %v", got, want)
			}
		})
	}
}

func TestPodDocumentDropsManagedFields(t *testing.T) {
	pod := policytest.Pod(1, time.Now())
	v, err := (&podDoc{}).podValue(pod, newPodShape(everyPodField))
	if err != nil {
		t.Fatal(err)
	}
	meta := v.Value.(ast.Object).Get(ast.StringTerm("metadata")).Value.(ast.Object)
	if meta.Get(ast.StringTerm("managedFields")) != nil {
		t.Error("input.pod.metadata.managedFields is present")
	}
	if len(pod.ManagedFields) == 0 {
		t.Error("converting the pod changed the caller's object")
	}
}
