package openkruise

import (
	_ "embed"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// CRDManifest is OpenKruise's ContainerRecreateRequest CRD, as YAML.
//
//go:embed crd/apps.kruise.io_containerrecreaterequests.yaml
var CRDManifest []byte

// CRD is OpenKruise's ContainerRecreateRequest CRD.
func CRD() (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(CRDManifest, crd); err != nil {
		return nil, fmt.Errorf("read OpenKruise's ContainerRecreateRequest CRD: %w", err)
	}
	return crd, nil
}
