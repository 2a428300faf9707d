package apps

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// AddToScheme adds v1alpha1 and v1beta1 to s.
func AddToScheme(s *runtime.Scheme) error {
	if err := v1alpha1.AddToScheme(s); err != nil {
		return err
	}
	return v1beta1.AddToScheme(s)
}
