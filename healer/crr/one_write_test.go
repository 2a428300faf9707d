package crr

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestOnePassWritesTheRequestsStatusOnce: a pass that both takes a gated
// pod out of service and finds that no daemon has picked the request up
// writes the request's status once, with both (two writes from one read
// would conflict with each other).
func TestOnePassWritesTheRequestsStatusOnce(t *testing.T) {
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	created := time.Now().Add(-time.Minute)
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	pod := gatedPod()
	crr := activeRequest("r")
	crr.CreationTimestamp = metav1.NewTime(created)
	writes := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(node, pod, crr).
		WithStatusSubresource(&v1beta1.ContainerRecreateRequest{}, &corev1.Pod{}).
		WithInterceptorFuncs(interceptor.Funcs{SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			if _, ok := obj.(*v1beta1.ContainerRecreateRequest); ok {
				writes++
			}
			return c.SubResource(sub).Update(ctx, obj, opts...)
		}}).Build()
	r := &Reconciler{Client: c, Recorder: events.NewFakeRecorder(10), PickupTimeout: time.Second}
	r.setDefaults()
	if _, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(crr)}); err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	got := &v1beta1.ContainerRecreateRequest{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(crr), got); err != nil {
		t.Fatal(err)
	}
	if writes != 1 {
		t.Errorf("%d status writes in one pass, want 1", writes)
	}
	if !meta.IsStatusConditionTrue(got.Status.Conditions, v1beta1.ConditionPreRecreateGrace) || !strings.Contains(got.Status.Message, "no daemon has picked up") {
		t.Errorf("status %+v; want the unready grace and the missing daemon both recorded", got.Status)
	}
}
