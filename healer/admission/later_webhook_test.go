package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// meddlePath is where this test binary serves a mutating webhook of
// someone else's, one that changes requests after Rejuv's has admitted them.
const meddlePath = "/meddle"

// meddleAnnotation names the change the meddler makes to a request.
const meddleAnnotation = "test.rejuv.dev/meddle"

// meddler is another mutating webhook, called after Rejuv's: it applies
// the JSON patch its annotation names and records whether Rejuv's webhook
// had run (the request carries a statusContext then).
type meddler struct {
	decoder admission.Decoder
	mu      sync.Mutex
	sawOurs map[string]bool
}

// meddles are the changes the meddler can make, as JSON patches.
var meddles = map[string]string{
	"clear-pod-name":   `[{"op":"replace","path":"/spec/podName","value":""}]`,
	"drop-containers":  `[{"op":"replace","path":"/spec/containers","value":[]}]`,
	"clear-container":  `[{"op":"replace","path":"/spec/containers/0/name","value":""}]`,
	"repeat-container": `[{"op":"add","path":"/spec/containers/-","value":{"name":"app","statusContext":{"containerID":"containerd://app1","restartCount":2}}}]`,
	"short-deadline":   `[{"op":"add","path":"/spec/activeDeadlineSeconds","value":1}]`,
}

func (m *meddler) Handle(_ context.Context, req admission.Request) admission.Response {
	crr := &v1beta1.ContainerRecreateRequest{}
	if err := m.decoder.Decode(req, crr); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	m.mu.Lock()
	m.sawOurs[crr.Name] = len(crr.Spec.Containers) > 0 && crr.Spec.Containers[0].StatusContext != nil
	m.mu.Unlock()
	patch, ok := meddles[crr.Annotations[meddleAnnotation]]
	if !ok {
		return admission.Allowed("")
	}
	resp := admission.Allowed("")
	resp.Patch, resp.PatchType = []byte(patch), ptr.To(admissionv1.PatchTypeJSONPatch)
	return resp
}

// TestValidationHoldsAfterAnotherMutatingWebhook: another mutating
// webhook, called after Rejuv's, changes an admitted request so that Rejuv
// would have refused it. The API server refuses it still, naming the
// field: the request's schema holds what Rejuv's webhook checked without
// the pod. (A request without a statusContext is admitted by the schema,
// so that requests can be made without the webhook where it does not run,
// as in the policy controller's integration tests; the daemon fails such
// a container without touching it.)
func TestValidationHoldsAfterAnotherMutatingWebhook(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	labelNamespace(t, ns, "test.rejuv.dev/meddle", "yes")
	createPod(t, ns, "web", nil)
	installMeddler(t)
	waitMeddlerCalled(t, ns)

	tests := []struct{ meddle, field, message string }{
		{"clear-pod-name", "spec.podName", "should be at least 1 chars long"},
		{"drop-containers", "spec.containers", "should have at least 1 items"},
		{"clear-container", "spec.containers[0].name", "should be at least 1 chars long"},
		{"repeat-container", "spec.containers[1]", "Duplicate value"},
		{"short-deadline", "spec.activeDeadlineSeconds", "should be greater than or equal to 3"},
	}
	for _, tt := range tests {
		t.Run(tt.meddle, func(t *testing.T) {
			crr := newCRR(ns, tt.meddle, "app")
			crr.Annotations = map[string]string{meddleAnnotation: tt.meddle}
			err := admin.Create(ctx, crr)
			if !theMeddler.sawRejuvs(tt.meddle) {
				t.Fatalf("the other webhook did not see the request after Rejuv's (err %v)", err)
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("create: %v; want Invalid", err)
			}
			if !hasCause(err, tt.field, tt.message) {
				t.Errorf("create: %v\nwant a cause on %s with %q", err, tt.field, tt.message)
			}
		})
	}
	// Unchanged by the other webhook, a request is admitted.
	if err := admin.Create(ctx, newCRR(ns, "untouched", "app")); err != nil {
		t.Errorf("a request the other webhook leaves alone: %v", err)
	}
}

// hasCause says whether err is a StatusError with a cause on field whose
// message contains message.
func hasCause(err error, field, message string) bool {
	var se *apierrors.StatusError
	if !errors.As(err, &se) || se.ErrStatus.Details == nil {
		return false
	}
	for _, c := range se.ErrStatus.Details.Causes {
		if c.Field == field && strings.Contains(c.Message, message) {
			return true
		}
	}
	return false
}

var theMeddler = &meddler{sawOurs: map[string]bool{}}

func (m *meddler) sawRejuvs(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sawOurs[name]
}

// installMeddler registers the meddler for requests in labelled
// namespaces, named so that the API server calls it after Rejuv's.
func installMeddler(t *testing.T) {
	t.Helper()
	wo := env.WebhookInstallOptions
	u := url.URL{Scheme: "https", Host: wo.LocalServingHost + ":" + strconv.Itoa(wo.LocalServingPort), Path: meddlePath}
	s := u.String()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "zz-someone-elses-webhook"},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    "meddle.test.rejuv.dev",
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &s, CABundle: wo.LocalServingCAData},
			Rules:                   []admissionregistrationv1.RuleWithOperations{{Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create}, Rule: admissionregistrationv1.Rule{APIGroups: []string{v1beta1.GroupVersion.Group}, APIVersions: []string{"v1beta1"}, Resources: []string{"containerrecreaterequests"}}}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"test.rejuv.dev/meddle": "yes"}},
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy:      ptr.To(admissionregistrationv1.NeverReinvocationPolicy),
		}},
	}
	if err := admin.Create(context.Background(), cfg); err != nil {
		t.Fatalf("register the other webhook: %v", err)
	}
	t.Cleanup(func() { _ = admin.Delete(context.Background(), cfg) })
}

// waitMeddlerCalled waits until the API server, which reads webhook
// configurations from its cache, calls the meddler for requests in ns.
func waitMeddlerCalled(t *testing.T, ns string) {
	t.Helper()
	for i := range 100 {
		name := fmt.Sprintf("probe-%d", i)
		if err := admin.Create(context.Background(), newCRR(ns, name, "app"), client.DryRunAll); err != nil {
			t.Fatalf("dry run: %v", err)
		}
		if theMeddler.sawRejuvs(name) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the API server did not call the other webhook within 10s")
}

// labelNamespace sets a label on a namespace.
func labelNamespace(t *testing.T, ns, key, value string) {
	t.Helper()
	n := &corev1.Namespace{}
	if err := admin.Get(context.Background(), client.ObjectKey{Name: ns}, n); err != nil {
		t.Fatal(err)
	}
	base := n.DeepCopy()
	if n.Labels == nil {
		n.Labels = map[string]string{}
	}
	n.Labels[key] = value
	if err := admin.Patch(context.Background(), n, client.MergeFrom(base)); err != nil {
		t.Fatalf("label namespace %s: %v", ns, err)
	}
}
