package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestAPageOfRequestsAtTheBoundFitsAConversionReview: the bound on one
// request is what makes a page of them fit one review.
func TestAPageOfRequestsAtTheBoundFitsAConversionReview(t *testing.T) {
	if page := pageSize * v1beta1.MaxRequestBytes; page > MaxConversionBytes-256<<10 {
		t.Errorf("a page of %d requests of %d bytes takes %d bytes, leaving less than 256 KiB of the %d a conversion review may take", pageSize, v1beta1.MaxRequestBytes, page, MaxConversionBytes)
	}
	if v1beta1.MaxAdmittedRequestBytes >= v1beta1.MaxRequestBytes {
		t.Errorf("the admitted part's bound %d leaves the status no room under %d", v1beta1.MaxAdmittedRequestBytes, v1beta1.MaxRequestBytes)
	}
}

// boundsMutator admits requests for pod web of namespace shop, which has
// active requests already.
func boundsMutator(t *testing.T, active int) *CRRMutator {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := apps.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", UID: "uid-1"}, Spec: podSpec(), Status: runningStatus()}
	objs := []client.Object{pod}
	for i := range active {
		objs = append(objs, &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: fmt.Sprintf("active-%d", i),
			Labels: map[string]string{v1beta1.PodUIDLabel: "uid-1", v1beta1.ActiveLabel: "true"}}})
	}
	// A completed request and one of another pod do not count.
	objs = append(objs,
		&v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "done", Labels: map[string]string{v1beta1.PodUIDLabel: "uid-1"}}},
		&v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "other", Labels: map[string]string{v1beta1.PodUIDLabel: "uid-2", v1beta1.ActiveLabel: "true"}}})
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	return &CRRMutator{Reader: c, Requests: c, Decoder: admission.NewDecoder(s)}
}

// TestACacheBehindCannotLetAPodPassItsRequestBound: the manager's cache
// may be a moment behind the API server (the replica busy, its watch
// slow). Once the cache counts half the bound, the API server's count
// decides; below that, the API server is not asked.
func TestACacheBehindCannotLetAPodPassItsRequestBound(t *testing.T) {
	full := boundsMutator(t, v1beta1.MaxActiveRequestsPerPod)
	listed := 0
	counting := interceptor.NewClient(full.Reader.(client.WithWatch), interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*v1beta1.ContainerRecreateRequestList); ok {
				listed++
			}
			return c.List(ctx, list, opts...)
		}})
	for _, tt := range []struct {
		name   string
		cached int
	}{
		{"a cache one request behind", v1beta1.MaxActiveRequestsPerPod - 1},
		{"a cache half the bound behind", v1beta1.MaxActiveRequestsPerPod / 2},
	} {
		listed = 0
		m := boundsMutator(t, tt.cached)
		m.Reader = counting
		resp := admitCreate(t, m, newCRR("shop", "r", "app"))
		if resp.Allowed {
			t.Errorf("%s: admitted with %d active requests on the API server and %d in the cache, want refused", tt.name, v1beta1.MaxActiveRequestsPerPod, tt.cached)
		}
		if listed != 1 {
			t.Errorf("%s: the API server's requests listed %d times, want once", tt.name, listed)
		}
	}

	// Below half the bound in the cache, the create costs no API call.
	listed = 0
	m := boundsMutator(t, v1beta1.MaxActiveRequestsPerPod/2-1)
	m.Reader = counting
	if resp := admitCreate(t, m, newCRR("shop", "r", "app")); !resp.Allowed {
		t.Errorf("with %d active requests in the cache: refused: %v", v1beta1.MaxActiveRequestsPerPod/2-1, resp.Result.Message)
	}
	if listed != 0 {
		t.Errorf("with %d active requests in the cache the API server's requests were listed %d times, want none", v1beta1.MaxActiveRequestsPerPod/2-1, listed)
	}
}

func admitCreate(t *testing.T, m *CRRMutator, crr *v1beta1.ContainerRecreateRequest) admission.Response {
	t.Helper()
	crr.TypeMeta = metav1.TypeMeta{APIVersion: "apps.kruise.io/v1beta1", Kind: "ContainerRecreateRequest"}
	raw, err := json.Marshal(crr)
	if err != nil {
		t.Fatal(err)
	}
	return m.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		Operation: admissionv1.Create, Namespace: "shop", Name: crr.Name, Object: runtime.RawExtension{Raw: raw},
	}})
}

// TestRequestsOverTheirBoundsAreRefused: a request larger than a page of
// them may take, with more containers than its status has room for, or
// for a pod that has as many active requests as a pod may have, is
// refused, naming the field and the bound.
func TestRequestsOverTheirBoundsAreRefused(t *testing.T) {
	for _, tt := range []struct {
		name   string
		active int
		change func(*v1beta1.ContainerRecreateRequest)
		want   string // in the refusal; admitted when empty
	}{
		{"an ordinary request", 0, nil, ""},
		{"annotations within the bound", 0, func(c *v1beta1.ContainerRecreateRequest) {
			c.Annotations = map[string]string{"example.com/notes": strings.Repeat("x", 12_000)}
		}, ""},
		{"annotations of 230 KB", 0, func(c *v1beta1.ContainerRecreateRequest) {
			c.Annotations = map[string]string{"example.com/notes": strings.Repeat("x", 230_000)}
		}, "metadata.annotations: Invalid value: \"23"},
		{"labels of 20 KB", 0, func(c *v1beta1.ContainerRecreateRequest) {
			c.Labels = map[string]string{}
			for i := range 400 {
				c.Labels[fmt.Sprintf("l%03d", i)] = strings.Repeat("v", 40)
			}
		}, "metadata.labels: Invalid value: \"2"},
		{"17 containers", 0, func(c *v1beta1.ContainerRecreateRequest) {
			for i := range 16 {
				c.Spec.Containers = append(c.Spec.Containers, v1beta1.ContainerRecreateRequestContainer{Name: fmt.Sprintf("c%d", i)})
			}
		}, "spec.containers: Too many: 17: must have at most 16 items"},
		{"a pod with one active request less than the cap", v1beta1.MaxActiveRequestsPerPod - 1, nil, ""},
		{"a pod with as many active requests as the cap", v1beta1.MaxActiveRequestsPerPod, nil,
			fmt.Sprintf("spec.podName: Forbidden: pod web has %d active ContainerRecreateRequests, the most a pod may have", v1beta1.MaxActiveRequestsPerPod)},
	} {
		crr := newCRR("shop", "r", "app")
		if tt.change != nil {
			tt.change(crr)
		}
		resp := admitCreate(t, boundsMutator(t, tt.active), crr)
		switch {
		case tt.want == "" && !resp.Allowed:
			t.Errorf("%s: refused: %v", tt.name, resp.Result.Message)
		case tt.want != "" && resp.Allowed:
			t.Errorf("%s: admitted, want refused with %q", tt.name, tt.want)
		case tt.want != "" && !strings.Contains(resp.Result.Message, tt.want):
			t.Errorf("%s: refused with %q, want %q in it", tt.name, resp.Result.Message, tt.want)
		case strings.Contains(tt.want, "Invalid value") && !strings.Contains(resp.Result.Message, fmt.Sprintf("more than the %d bytes", v1beta1.MaxAdmittedRequestBytes)):
			t.Errorf("%s: refused with %q, which does not name the bound %d", tt.name, resp.Result.Message, v1beta1.MaxAdmittedRequestBytes)
		}
	}
}

// TestAnUpdateThatGrowsARequestPastItsBoundIsRefused: a request's
// annotations and labels may change after it is created; an update that
// takes it past the bound is refused, naming the field, while one that
// does not make it larger (the manager removing its active label, which
// adds the manager's managed fields) goes through.
func TestAnUpdateThatGrowsARequestPastItsBoundIsRefused(t *testing.T) {
	s, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	v := &CRRValidator{Decoder: admission.NewDecoder(s)}
	old := newCRR("shop", "r", "app")
	old.TypeMeta = metav1.TypeMeta{APIVersion: "apps.kruise.io/v1beta1", Kind: "ContainerRecreateRequest"}
	old.Labels = map[string]string{v1beta1.ActiveLabel: "true"}
	old.Annotations = map[string]string{"example.com/notes": strings.Repeat("x", v1beta1.MaxAdmittedRequestBytes-600)}
	grown := old.DeepCopy()
	grown.Annotations["example.com/more"] = strings.Repeat("y", 2000)
	retired := old.DeepCopy()
	delete(retired.Labels, v1beta1.ActiveLabel)
	retired.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "rejuv-manager", Operation: metav1.ManagedFieldsOperationUpdate,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:` + strings.Repeat("z", 1000) + `":{}}}}`)}}
	for _, tt := range []struct {
		name    string
		updated *v1beta1.ContainerRecreateRequest
		want    string
	}{
		{"annotations grown past the bound", grown, "metadata.annotations: Invalid value"},
		{"the active label removed", retired, ""},
	} {
		rawOld, _ := json.Marshal(old)
		rawNew, _ := json.Marshal(tt.updated)
		resp := v.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			Operation: admissionv1.Update, Namespace: "shop", Name: "r", Object: runtime.RawExtension{Raw: rawNew}, OldObject: runtime.RawExtension{Raw: rawOld},
		}})
		switch {
		case tt.want == "" && !resp.Allowed:
			t.Errorf("%s: refused: %v", tt.name, resp.Result.Message)
		case tt.want != "" && (resp.Allowed || !strings.Contains(resp.Result.Message, tt.want)):
			t.Errorf("%s: allowed %v, %v; want refused with %q", tt.name, resp.Allowed, resp.Result, tt.want)
		}
	}
}
