package planner

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestRequestCarriesThePolicysSource: the requests of a policy kubectl
// rejuv wrote count as the plugin's; a policy without the label gives its
// requests none.
func TestRequestCarriesThePolicysSource(t *testing.T) {
	c := scheduleCandidate(pod("a", true))
	c.Trigger.Requested = true
	p := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "restart-deployment-web", UID: "p1",
		Labels: map[string]string{appsv1beta1.SourceLabel: "kubectl"}}}
	crr := Request(p, c)
	if crr.Labels[appsv1beta1.SourceLabel] != "kubectl" || crr.Labels[appsv1beta1.TriggerLabel] != "restart" || crr.Labels[appsv1beta1.PolicyLabel] != p.Name {
		t.Errorf("labels %v", crr.Labels)
	}
	p.Labels = nil
	if _, ok := Request(p, c).Labels[appsv1beta1.SourceLabel]; ok {
		t.Error("a policy without a source gave its request one")
	}
}
