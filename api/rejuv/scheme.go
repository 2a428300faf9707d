package rejuv

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// AddToScheme adds every version of rejuv.dev to s.
func AddToScheme(s *runtime.Scheme) error {
	return v1alpha1.AddToScheme(s)
}
