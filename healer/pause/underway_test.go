package pause

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestUnderWayBesideOpenKruiseReadsV1alpha1: where apps.kruise.io serves
// v1alpha1 alone (OpenKruise's CRD), the requests under way are listed in
// v1alpha1, not reported as an error.
func TestUnderWayBesideOpenKruiseReadsV1alpha1(t *testing.T) {
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	active := &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r", Labels: map[string]string{v1beta1.ActiveLabel: "true"}}}
	var asked []string
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(active).WithInterceptorFuncs(interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			gvk := list.GetObjectKind().GroupVersionKind()
			asked = append(asked, gvk.Version)
			if gvk.Group == v1beta1.GroupVersion.Group && gvk.Version == "v1beta1" {
				return &meta.NoKindMatchError{GroupKind: schema.GroupKind{Group: gvk.Group, Kind: "ContainerRecreateRequest"}, SearchedVersions: []string{"v1beta1"}}
			}
			return c.List(ctx, list, opts...)
		},
	}).Build()
	u, err := ReadUnderWay(context.Background(), c)
	if err != nil {
		t.Fatalf("ReadUnderWay: %v (versions asked: %v)", err, asked)
	}
	if len(u.Requests) != 1 || u.Requests[0] != "shop/r" {
		t.Errorf("requests under way %v, want shop/r (versions asked: %v)", u.Requests, asked)
	}
}
