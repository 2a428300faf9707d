package v1alpha1

import (
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestSchemaBoundsMatchTheCode: the generated CRD refuses no text the
// controller writes, cut to its bounds, and lets none longer through:
// each field's maxLength, and each list's maxItems, is the bound the code
// cuts it to.
func TestSchemaBoundsMatchTheCode(t *testing.T) {
	raw, err := os.ReadFile("../../../config/crd/bases/rejuv.dev_recreatepolicies.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	status := crd.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["status"]
	decision := status.Properties["recentDecisions"].Items.Schema.Properties
	conditionMessage := status.Properties["conditions"].Items.Schema.Properties["message"]
	for _, tc := range []struct {
		field  string
		schema apiextensionsv1.JSONSchemaProps
		bound  int
	}{
		{"status.conditions[].message", conditionMessage, MaxMessageLength},
		{"status.recentDecisions[].reason", decision["reason"], MaxReasonLength},
		{"status.recentDecisions[].message", decision["message"], MaxReasonLength},
		{"status.run.message", status.Properties["run"].Properties["message"], MaxReasonLength},
		{"status.noData[].reason", status.Properties["noData"].Items.Schema.Properties["reason"], MaxReasonLength},
	} {
		if got := tc.schema.MaxLength; got == nil || *got != int64(tc.bound) {
			t.Errorf("%s: maxLength %v, want the code's bound %d", tc.field, got, tc.bound)
		}
	}
	// The lists the controller cuts: maxItems is the code's bound.
	if got := status.Properties["noData"].MaxItems; got == nil || *got != MaxNoData {
		t.Errorf("status.noData: maxItems %v, want the code's bound %d", got, MaxNoData)
	}
}
