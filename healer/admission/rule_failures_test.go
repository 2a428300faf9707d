package admission

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/refusals"
)

// TestRuleFailuresAreAdmitted: the rules of refusals.RuleFailures fail only
// when they run, so the policy webhook admits a policy with any of them;
// healer/recreatepolicy checks how each fails.
func TestRuleFailuresAreAdmitted(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	for i, row := range refusals.RuleFailures {
		t.Run(row.Doing, func(t *testing.T) {
			p := &v1alpha1.RecreatePolicy{
				ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("failing-%d", i)},
				Spec: v1alpha1.RecreatePolicySpec{
					Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Rules:    []v1alpha1.Rule{{Name: "faulty", Rego: row.Rego}},
				},
			}
			if err := admin.Create(context.Background(), p); err != nil {
				t.Errorf("RecreatePolicy %s/%s refused: %v", ns, p.Name, err)
			}
		})
	}
}
