package invariant

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// rollingRun is a run of policy pol over four pods as the cluster shows
// it: each pod's request is seen as the previous one ends, back-6 seconds
// before the soak sees the previous pod Ready again (the manager's watch
// was ahead).
func rollingRun(s *soak, pol *v1alpha1.RecreatePolicy, from, back float64) {
	pods := s.selected(pol, 4)
	for i, p := range pods {
		r := inRun(newRequest("run-"+podName(i), p, pol), at(from))
		s.recreation(from+6*float64(i), r, p, back)
	}
}

func podName(i int) string { return "web-" + string(rune('0'+i)) }

func TestBudgetQuietOnARollingRun(t *testing.T) {
	for _, mu := range []string{"", "1", "25%"} {
		t.Run("maxUnavailable="+mu, func(t *testing.T) {
			s := newSoak()
			pol := newPolicy("nightly", mu)
			rollingRun(s, pol, 10, 6.2)
			rep := s.finish(60)
			quiet(t, rep)
			if rep.Requests != 4 || rep.Succeeded != 4 || rep.Restarts != 4 {
				t.Errorf("requests %d succeeded %d restarts %d, want 4 of each", rep.Requests, rep.Succeeded, rep.Restarts)
			}
		})
	}
}

func TestBudgetAllowsTheWatchesSkew(t *testing.T) {
	cases := []struct {
		back float64
		want int
	}{
		{6.2, 0},
		{6.9, 0},
		{7.2, 3},
	}
	for _, tc := range cases {
		s := newSoak()
		rollingRun(s, newPolicy("nightly", "1"), 10, tc.back)
		rep := s.finish(60)
		if got := len(only(rep, Budget)); got != tc.want {
			t.Errorf("previous pod back %.1fs after the next request: %d violations, want %d:\n%s", tc.back-6, got, tc.want, dump(rep))
		}
	}
}

func TestBudgetQuietOnAPassOfTwoAtMaxUnavailableTwo(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "2")
	pods := s.selected(pol, 4)
	s.recreation(10, newRequest("a", pods[0], pol), pods[0], 7)
	s.recreation(10, newRequest("b", pods[1], pol), pods[1], 7.5)
	s.recreation(17.1, newRequest("c", pods[2], pol), pods[2], 7)
	s.recreation(17.6, newRequest("d", pods[3], pol), pods[3], 7)
	quiet(t, s.finish(60))
}

func TestBudgetFiresWhenANextPodIsTakenBeforeThePreviousIsBack(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	pods := s.selected(pol, 4)
	s.recreation(10, newRequest("a", pods[0], pol), pods[0], 9) // back at 19
	s.recreation(16, newRequest("b", pods[1], pol), pods[1], 9) // taken at 16, back at 25
	s.recreation(17, newRequest("c", pods[2], pol), pods[2], 9) // three at once at 17
	rep := s.finish(60)
	expect(t, rep, Budget, 1, "3 of 4 selected pods unavailable")
	v := only(rep, Budget)[0]
	if !v.At.Equal(at(16)) || v.Subject != "policy shop/nightly" {
		t.Errorf("violation at %s about %s, want at +16s about policy shop/nightly", v.At.Sub(start), v.Subject)
	}
	joined := strings.Join(v.Evidence, "\n")
	for _, want := range []string{"over budget from +16.0s to +25.0s", "pod shop/web-0", "request shop/b", "request shop/c"} {
		if !strings.Contains(joined, want) {
			t.Errorf("evidence lacks %q:\n%s", want, joined)
		}
	}
}

func TestBudgetLeavesOutPodsThatWereNotReadyWhenTaken(t *testing.T) {
	s := newSoak()
	pol := newPolicy("stuck", "1")
	var pods []*corev1.Pod
	for i := range 4 {
		pods = append(pods, newPod(podName(i)))
		if i < 2 {
			setReady(pods[i], false)
		}
		s.pod(0, pods[i])
	}
	s.policy(0, pol)
	// Both unready pods are recreated at once, as the manager may: they
	// take no unit of the budget.
	s.request(10, byRule(newRequest("a", pods[0], pol), "stuck-readiness"))
	s.request(10, byRule(newRequest("b", pods[1], pol), "stuck-readiness"))
	quiet(t, s.finish(30))
}

func TestBudgetCountsAPodNotBackAfterItsRequestEnded(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	pods := s.selected(pol, 2)
	s.recreation(10, newRequest("a", pods[0], pol), pods[0], 30) // ends at 16, never Ready until 40
	s.request(20, newRequest("b", pods[1], pol))
	rep := s.finish(60)
	expect(t, rep, Budget, 1, "2 of 2 selected pods unavailable")
}

func TestBudgetIgnoresRequestsOfOtherPoliciesAndByHand(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	other := newPolicy("other", "1")
	other.Spec.Selector.MatchLabels = map[string]string{"app": "db"}
	pods := s.selected(pol, 3)
	s.policy(0, other)
	s.request(10, newRequest("mine", pods[0], pol))
	s.request(10, newRequest("hand", pods[1], nil))
	s.request(10, newRequest("theirs", pods[2], other))
	quiet(t, s.finish(30))
}

func TestMaxUnavailable(t *testing.T) {
	cases := []struct {
		mu       string
		selected int
		want     int
	}{
		{"", 4, 1},
		{"", 8, 2},
		{"25%", 3, 1},
		{"50%", 5, 2},
		{"2", 10, 2},
		{"0", 10, 1},
		{"100%", 4, 4},
		{"1", 0, 1},
	}
	for _, tc := range cases {
		pol := &policy{obj: newPolicy("p", tc.mu)}
		if got := maxUnavailable(pol, tc.selected); got != tc.want {
			t.Errorf("maxUnavailable %q of %d: got %d, want %d", tc.mu, tc.selected, got, tc.want)
		}
	}
	bad := intstr.FromString("lots")
	pol := &policy{obj: newPolicy("p", "")}
	pol.obj.Spec.Rollout.MaxUnavailable = &bad
	if got := maxUnavailable(pol, 10); got != 1 {
		t.Errorf("maxUnavailable that does not parse: got %d, want 1", got)
	}
}

// TestBudgetLeavesOutAPodBackAndThenUnreadyForAnotherReason: a pod the
// policy recreated came back Ready, then turned unready when its node was
// lost; the policy's next request for another pod does not make two of
// its own unavailable.
func TestBudgetLeavesOutAPodBackAndThenUnreadyForAnotherReason(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	pods := s.selected(pol, 2)
	s.recreation(10, newRequest("a", pods[0], pol), pods[0], 8) // back at 18
	setReady(pods[0], false)
	s.pod(30, pods[0]) // its node lost
	s.request(35, newRequest("b", pods[1], pol))
	quiet(t, s.finish(60))
}

// TestBudgetLeavesOutAPodBeingDeleted: a pod the policy recreated that is
// being deleted (scaled down) as its request fails is going whatever the
// policy does; the policy's next request does not put it over budget.
func TestBudgetLeavesOutAPodBeingDeleted(t *testing.T) {
	s := newSoak()
	pol := newPolicy("nightly", "1")
	pods := s.selected(pol, 2)
	r := newRequest("a", pods[0], pol)
	s.request(10, r)
	setInService(pods[0], false)
	setReady(pods[0], false)
	s.pod(11, pods[0])
	restartContainer(pods[0], "app")
	pods[0].DeletionTimestamp = &metav1.Time{Time: at(12)}
	s.pod(12, pods[0])
	complete(r, "Failed")
	s.request(13, r)
	s.request(13.2, newRequest("b", pods[1], pol))
	s.podGone(16, pods[0])
	quiet(t, s.finish(60))
}

// TestBudgetLeavesOutPodsOfASilentNodeItsWatchSawReadyLate: seed 14's hour
// (+3490.5 s). Node-1's kubelet paused past the node grace; the API server
// restarted and the soak's pod watch delivered nothing for 50 s. The node
// controller made node-1's two pods unready (NodeNotReady), which the
// manager read and recreated both in one pass of a maxUnavailable-1 run,
// uncounted as unready already. The soak first saw both requests with the
// pods Ready as it had last seen them, before the pause: neither request
// could take its pod out of service while the kubelet was silent (the pod
// is held until its Ready condition turns False, which only the node
// controller could do), so neither counts. The same requests on pods
// whose node is not silent, or that nothing holds before stopping, take
// them while Ready: two of four at once are over the budget.
func TestBudgetLeavesOutPodsOfASilentNodeItsWatchSawReadyLate(t *testing.T) {
	cases := []struct {
		name      string
		silenced  string
		gate      bool
		grace     bool
		wantViols int
	}{
		{"kubelet paused on their node", "node-1", true, true, 0},
		{"no fault", "", true, true, 1},
		{"kubelet paused on another node", "node-2", true, true, 1},
		{"pods without the readiness gate", "node-1", false, true, 1},
		{"requests without an unready grace", "node-1", true, false, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak(PauseKubelet)
			pol := newPolicy("restart-deployment-web", "25%")
			var pods []*corev1.Pod
			for i := range 4 {
				p := newPod(podName(i))
				if i >= 2 {
					p.Spec.NodeName = "node-2"
				}
				if tc.gate {
					p.Spec.ReadinessGates = []corev1.PodReadinessGate{{ConditionType: v1beta1.PodReadyCondition}}
				}
				pods = append(pods, p)
				s.pod(0, p)
			}
			s.policy(0, pol)
			if tc.silenced != "" {
				s.fault(10, 1, PauseKubelet, tc.silenced)
			}
			s.fault(33, 2, RestartAPIServer, "kube-apiserver")
			s.faultEnded(38, 2)
			// The request watch lists again at 50: both requests of the
			// run, under way, their pods Ready as last seen at 0.
			var reqs []*v1beta1.ContainerRecreateRequest
			for i := range 2 {
				r := inRun(newRequest("run-"+podName(i), pods[i], pol), at(42))
				if tc.grace {
					grace := int64(5)
					r.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: &grace}
				}
				r.Status.Phase = v1beta1.PhaseRecreating
				reqs = append(reqs, r)
				s.request(50, r)
			}
			// The pod watch lists again at 63.5: both unready, their gate
			// False.
			for i := range 2 {
				setReady(pods[i], false)
				setInService(pods[i], false)
				s.pod(63.5, pods[i])
			}
			// The manager ends both for the node's loss; the kubelet is
			// back at 76.8 and starts their containers again.
			for _, r := range reqs {
				complete(r, v1beta1.ResultFailed)
				s.request(72, r)
			}
			if tc.silenced != "" {
				s.faultEnded(76.8, 1)
			}
			for i := range 2 {
				restartContainer(pods[i], "app")
				setInService(pods[i], true)
				setReady(pods[i], true)
				s.pod(77+float64(i), pods[i])
			}
			rep := s.finish(120)
			if got := len(only(rep, Budget)); got != tc.wantViols {
				t.Fatalf("%d %s violations, want %d:\n%s", got, Budget, tc.wantViols, dump(rep))
			}
		})
	}
}
