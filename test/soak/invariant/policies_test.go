package invariant

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

func TestAPolicyThatSelectsOtherPodsNoLongerCountsThem(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	threeRecreating(s, pol)
	// The spec changes to select nothing at 12: the episode ends.
	pol.Spec.Selector = metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}}
	pol.Generation++
	s.policy(12, pol)
	rep := s.finish(30)
	expect(t, rep, Budget, 1, "")
	if v := only(rep, Budget)[0]; v.Evidence[0] != "over budget from +10.0s to +12.0s (2.0s)" {
		t.Errorf("episode %q, want it ended by the new selector", v.Evidence[0])
	}
}

func TestAPolicyGoneEndsItsEpisode(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	threeRecreating(s, pol)
	s.add(PolicySeen{At: at(10.5), Policy: pol.DeepCopy(), Gone: true})
	s.tick(20)
	quiet(t, s.finish(30))
}

func TestASelectorThatDoesNotParseSelectsNothing(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	pol.Spec.Selector = metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Sometimes"}}}
	threeRecreating(s, pol)
	quiet(t, s.finish(30))
}

// threeRecreating takes three pods of four for pol at 10.
func threeRecreating(s *soak, pol *v1alpha1.RecreatePolicy) {
	pods := s.selected(pol, 4)
	for i := range 3 {
		s.request(10, newRequest("r"+podName(i), pods[i], pol))
	}
}
