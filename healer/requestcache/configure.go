package requestcache

import (
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// Configure sets up opts to keep the requests of the version the manager
// watches, requests (an empty v1beta1 or v1alpha1 request), with what
// they hold alike shared (see doc.go). Only that version: the cache asks
// the API server about every type it is configured for, and v1alpha1 is
// served only where OpenKruise is installed.
func Configure(opts *cache.Options, requests client.Object) {
	s := &sharedValues{}
	if opts.ByObject == nil {
		opts.ByObject = map[client.Object]cache.ByObject{}
	}
	opts.ByObject[requests] = cache.ByObject{Transform: s.transform}
}

// transform keeps a request's shared values shared; other objects are
// left as they are.
func (s *sharedValues) transform(obj any) (any, error) {
	switch crr := obj.(type) {
	case *appsv1beta1.ContainerRecreateRequest:
		s.request(crr)
	case *appsv1alpha1.ContainerRecreateRequest:
		s.requestV1alpha1(crr)
	}
	return obj, nil
}
