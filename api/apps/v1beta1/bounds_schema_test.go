package v1beta1

import (
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// TestSchemaHoldsTheContainerBound: in both versions the generated CRD
// refuses a request of more containers than MaxRequestContainers, the
// webhook's bound, so that a request another webhook changes after
// Rejuv's is held to it too.
func TestSchemaHoldsTheContainerBound(t *testing.T) {
	raw, err := os.ReadFile("../../../config/crd/bases/apps.kruise.io_containerrecreaterequests.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		t.Fatal(err)
	}
	if len(crd.Spec.Versions) != 2 {
		t.Fatalf("the CRD has %d versions, want v1alpha1 and v1beta1", len(crd.Spec.Versions))
	}
	for _, v := range crd.Spec.Versions {
		containers := v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["containers"]
		if got := containers.MaxItems; got == nil || *got != MaxRequestContainers {
			t.Errorf("%s: spec.containers maxItems %v, want the webhook's bound %d", v.Name, got, MaxRequestContainers)
		}
	}
}
