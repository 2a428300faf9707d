package admission

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/pause"
)

// TestNoRequestIsAdmittedWhileRejuvIsPaused: with the emergency stop's
// ConfigMap in the manager's namespace, a request that would be admitted
// is refused, the refusal saying why and how to resume; without it, or
// with one of that name in another namespace, it is admitted.
func TestNoRequestIsAdmittedWhileRejuvIsPaused(t *testing.T) {
	stop := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "rejuv-system", Name: v1alpha1.PauseConfigMap},
		Data: map[string]string{v1alpha1.PauseReasonKey: "INC-9"}}
	elsewhere := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: v1alpha1.PauseConfigMap}}
	for _, tt := range []struct {
		name    string
		objs    []*corev1.ConfigMap
		refused bool
	}{
		{"not paused", nil, false},
		{"a ConfigMap of that name in a tenant's namespace", []*corev1.ConfigMap{elsewhere}, false},
		{"paused", []*corev1.ConfigMap{stop}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := boundsMutator(t, 0)
			b := fake.NewClientBuilder()
			for _, cm := range tt.objs {
				b = b.WithObjects(cm.DeepCopy())
			}
			m.Pause = &pause.Switch{Reader: b.Build(), Namespace: "rejuv-system"}
			resp := admitCreate(t, m, newCRR("shop", "r", "app"))
			if !tt.refused {
				if !resp.Allowed {
					t.Errorf("refused: %s", resp.Result.Message)
				}
				return
			}
			msg := resp.Result.Message
			if resp.Allowed || !strings.Contains(msg, `paused cluster-wide by ConfigMap rejuv-system/rejuv-pause: "INC-9"`) || !strings.Contains(msg, "kubectl rejuv resume --all") {
				t.Errorf("allowed %v: %q; want refused, saying Rejuv is paused, why, and how to resume", resp.Allowed, msg)
			}
		})
	}
}
