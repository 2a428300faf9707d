package uninstall

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	rejuv "github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestOptionsNameEachBadFlag: an empty namespace or ServiceAccount and a
// timeout that is not positive are refused, each named.
func TestOptionsNameEachBadFlag(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("prepare-uninstall", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--namespace=", "--service-account=", "--timeout=0s"}); err != nil {
		t.Fatal(err)
	}
	err := o.Validate()
	for _, want := range []string{"--namespace is empty", "--service-account is empty", "--timeout is 0s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to say %q", err, want)
		}
	}
	o = Options{}
	fs = flag.NewFlagSet("prepare-uninstall", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(nil); err != nil || o.Validate() != nil || o.Poll <= 0 {
		t.Errorf("the defaults: %v, %v, poll %s; want valid", err, o.Validate(), o.Poll)
	}
}

// preparing is a cluster with the manager's ServiceAccount and objs, whose
// manager confirms the stop the first time it is read after failing reads
// of it; Prepare's options for it.
func preparing(t *testing.T, failingReads int, objs ...client.Object) (client.Client, Options) {
	t.Helper()
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	objs = append(objs, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "rejuv-system", Name: "rejuv-healer", UID: "sa-uid"}})
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			cm, ok := obj.(*corev1.ConfigMap)
			if !ok || key.Name != rejuv.PauseConfigMap {
				return c.Get(ctx, key, obj, opts...)
			}
			if failingReads > 0 {
				failingReads--
				return errors.New("the API server is restarting")
			}
			if err := c.Get(ctx, key, cm, opts...); err != nil {
				return err
			}
			cm.Annotations = map[string]string{rejuv.PauseObservedAnnotation: rejuv.PauseDigest(cm.Data)}
			return c.Update(ctx, cm)
		},
	}).Build()
	return c, Options{Namespace: "rejuv-system", ServiceAccount: "rejuv-healer", Reason: "uninstalling", Timeout: time.Second, Poll: 10 * time.Millisecond}
}

// TestPrepareWritesAStopOwnedByTheManagersServiceAccount: the stop ends
// every request and goes with the manager's ServiceAccount; a read that
// fails is tried again; with nothing under way, Prepare is done.
func TestPrepareWritesAStopOwnedByTheManagersServiceAccount(t *testing.T) {
	c, o := preparing(t, 2)
	if err := Prepare(context.Background(), c, o); err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "rejuv-system", Name: rejuv.PauseConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data[rejuv.PauseRequestsKey] != rejuv.PauseEnd || cm.Data[rejuv.PauseReasonKey] != "uninstalling" {
		t.Errorf("the stop's data %v, want requests: end and the reason", cm.Data)
	}
	if len(cm.OwnerReferences) != 1 || cm.OwnerReferences[0].Kind != "ServiceAccount" || cm.OwnerReferences[0].UID != "sa-uid" {
		t.Errorf("the stop's owners %+v, want the manager's ServiceAccount", cm.OwnerReferences)
	}
}

// TestPrepareFailsNamingWhatIsLeft: a pod still held when the timeout
// passes fails the preparation, named, so that the uninstall stops.
func TestPrepareFailsNamingWhatIsLeft(t *testing.T) {
	held := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec:       corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: v1beta1.PodReadyCondition}}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: v1beta1.PodReadyCondition, Status: corev1.ConditionFalse}}},
	}
	c, o := preparing(t, 0, held)
	o.Timeout = 200 * time.Millisecond
	err := Prepare(context.Background(), c, o)
	if err == nil || !strings.Contains(err.Error(), "1 pod held out of their Services by the readiness gate KruisePodReady (shop/web)") {
		t.Errorf("Prepare with a pod held: %v", err)
	}
}
