package crr

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestABusyDaemonIsNotReportedMissing: a request no daemon has touched
// after the pickup timeout is reported as such only when no daemon runs on
// its node; when the node's daemon pod runs and is Ready, the daemon is
// busy with the node's other requests, and the message says so and names
// it, rather than asking whether rejuv-daemon runs.
func TestABusyDaemonIsNotReportedMissing(t *testing.T) {
	now := time.Date(2026, 11, 29, 4, 0, 0, 0, time.UTC)
	crr := &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r",
		CreationTimestamp: metav1.NewTime(now.Add(-40 * time.Second)), Labels: map[string]string{v1beta1.NodeNameLabel: "node-a"}}}
	daemon := func(name, node string, ready corev1.ConditionStatus) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "rejuv-system", Name: name, Labels: map[string]string{"app.kubernetes.io/name": "rejuv-daemon"}},
			Spec:   corev1.PodSpec{NodeName: node},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
	}
	for _, tc := range []struct {
		name    string
		daemons []*corev1.Pod
		want    string
	}{
		{"the node's daemon runs and is ready", []*corev1.Pod{daemon("rejuv-daemon-a", "node-a", corev1.ConditionTrue), daemon("rejuv-daemon-b", "node-b", corev1.ConditionTrue)},
			"the daemon on node node-a (pod rejuv-daemon-a) runs but has not picked up this request within 30s: it is busy with the node's other requests"},
		{"no daemon on the node", []*corev1.Pod{daemon("rejuv-daemon-b", "node-b", corev1.ConditionTrue)},
			"no daemon has picked up this request within 30s; is rejuv-daemon running on node node-a?"},
		{"the node's daemon is not ready", []*corev1.Pod{daemon("rejuv-daemon-a", "node-a", corev1.ConditionFalse)},
			"no daemon has picked up this request within 30s; is rejuv-daemon running on node node-a?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			for _, d := range tc.daemons {
				b = b.WithObjects(d)
			}
			r := &Reconciler{Client: b.Build(), PickupTimeout: 30 * time.Second, DaemonNamespace: "rejuv-system"}
			status := crr.Status.DeepCopy()
			r.checkPickup(t.Context(), crr, status, now)
			if status.Message != tc.want {
				t.Errorf("message = %q, want %q", status.Message, tc.want)
			}
			if strings.Contains(tc.want, "busy") && strings.Contains(status.Message, "no daemon") {
				t.Errorf("a running daemon reported missing: %q", status.Message)
			}
		})
	}
}
