package invariant

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// threePods are web-0..2, Ready, with a policy and a budget that wants
// desired of them healthy, all seen at 0.
func threePods(s *soak, desired int32, respect *bool) []*corev1.Pod {
	var pods []*corev1.Pod
	for i := range 3 {
		pods = append(pods, newPod(podName(i)))
		s.pod(0, pods[i])
	}
	pol := newPolicy("nightly", "100%")
	pol.Spec.Rollout.RespectPodDisruptionBudgets = respect
	s.policy(0, pol)
	s.pdb(0, newPDB("web", desired))
	return pods
}

func TestAPolicyRespectsDisruptionBudgets(t *testing.T) {
	no := false
	cases := []struct {
		name    string
		desired int32
		respect *bool
		hand    bool
		unready bool
		want    int
	}{
		{"the budget allows one", 2, nil, false, false, 0},
		{"the budget allows none", 3, nil, false, false, 1},
		{"the policy does not respect budgets", 3, &no, false, false, 0},
		{"a request by hand", 3, nil, true, false, 0},
		{"the pod was not Ready", 3, nil, false, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			pods := threePods(s, tc.desired, tc.respect)
			if tc.unready {
				setReady(pods[0], false)
				s.pod(5, pods[0])
			}
			pol := newPolicy("nightly", "100%")
			if tc.hand {
				pol = nil
			}
			s.request(10, newRequest("a", pods[0], pol))
			rep := s.finish(30)
			expect(t, rep, DisruptionBudget, tc.want, "while PodDisruptionBudget shop/web allowed no disruption")
			if tc.want > 0 {
				joined := strings.Join(only(rep, DisruptionBudget)[0].Evidence, "\n")
				for _, want := range []string{"desiredHealthy 3", "pod shop/web-1", "pod shop/web-2"} {
					if !strings.Contains(joined, want) {
						t.Errorf("evidence lacks %q:\n%s", want, joined)
					}
				}
			}
		})
	}
}

func TestADisruptionBudgetAllowsTheWatchesSkew(t *testing.T) {
	cases := []struct {
		// back is when the soak sees another pod, taken before, Ready
		// again; the request is seen at 10.
		back float64
		want int
	}{
		{10.5, 0},
		{11, 0},
		{11.5, 1},
	}
	for _, tc := range cases {
		s := newSoak()
		pods := threePods(s, 2, nil)
		setReady(pods[1], false)
		s.pod(5, pods[1])
		s.request(10, newRequest("a", pods[0], newPolicy("nightly", "100%")))
		setReady(pods[1], true)
		s.pod(tc.back, pods[1])
		rep := s.finish(30)
		if got := len(only(rep, DisruptionBudget)); got != tc.want {
			t.Errorf("other pod back at +%.1fs: %d violations, want %d:\n%s", tc.back, got, tc.want, dump(rep))
		}
	}
}

func TestADisruptionBudgetDoesNotCountPodsInFlightOrTerminating(t *testing.T) {
	s := newSoak()
	pods := threePods(s, 1, nil)
	pol := newPolicy("nightly", "100%")
	s.request(5, newRequest("hand", pods[1], nil))
	now := pods[2].CreationTimestamp
	pods[2].DeletionTimestamp = &now
	s.pod(6, pods[2])
	s.request(10, newRequest("a", pods[0], pol))
	expect(t, s.finish(30), DisruptionBudget, 1, "0 pods healthy besides it, desiredHealthy 1")
}

func TestADisruptionBudgetWithoutSelectorCoversNothing(t *testing.T) {
	s := newSoak()
	pods := threePods(s, 3, nil)
	b := newPDB("web", 3)
	b.Spec.Selector = nil
	s.pdb(1, b)
	s.request(10, newRequest("a", pods[0], newPolicy("nightly", "100%")))
	quiet(t, s.finish(30))
}

// Seed 11's one-hour run, +3580.9 s: the manager charged the budget (it
// allowed one disruption, four pods healthy) and created its request
// while the load deleted another of the budget's pods (not an eviction);
// the soak saw that deletion 0.2 s before the request. A pod whose
// deletion was first seen within Slack.Skew before the request still
// counts as healthy; one deleted earlier does not.
func TestADisruptionBudgetCountsAPodDeletedAsTheRequestWasMade(t *testing.T) {
	for _, tc := range []struct {
		deleted float64
		want    int
	}{
		{9.8, 0},
		{8.5, 1},
	} {
		s := newSoak()
		pods := threePods(s, 2, nil)
		deleting := pods[1].DeepCopy()
		deleting.DeletionTimestamp = &metav1.Time{Time: at(tc.deleted)}
		s.pod(tc.deleted, deleting)
		s.request(10, newRequest("a", pods[0], newPolicy("nightly", "100%")))
		rep := s.finish(30)
		expect(t, rep, DisruptionBudget, tc.want, "while PodDisruptionBudget shop/web allowed no disruption")
	}
}

// Seed 14's one-hour run, +66.0 s: the API server restarted (+48 to +62
// s) and the soak's watches came back each in its own time. The manager
// created its request for web-0 at +63.3 s, with four pods Ready and a
// budget that wants three (one disruption allowed); the load deleted
// web-1 at +64.0 s. The soak's pod watch, back at +64.9 s, showed web-1
// being deleted, and its request watch, back at +66.0 s, the request:
// 1.1 s apart, past Slack.Skew, though the deletion came after the
// request. A deletion the API server took in a later second than the
// request's creation counts the pod healthy, whenever the soak saw the
// two; one taken in the same second or before does not, when seen more
// than Slack.Skew before the request.
func TestADisruptionBudgetCountsAPodDeletedAfterTheRequestWasCreated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		deleted float64
		want    int
	}{
		{"deleted in a later second", 64.0, 0},
		{"deleted in the same second", 63.9, 1},
		{"deleted before", 55.0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			var pods []*corev1.Pod
			for i := range 4 {
				pods = append(pods, newPod(podName(i)))
				s.pod(0, pods[i])
			}
			s.policy(0, newPolicy("rolling", "1"))
			b := newPDB("web", 3)
			b.Status.CurrentHealthy, b.Status.DisruptionsAllowed, b.Status.ExpectedPods = 4, 1, 4
			s.pdb(0, b)
			s.fault(48, 1, RestartAPIServer, "kube-apiserver")
			s.faultEnded(62, 1)
			// web-1 deleted with a 30 s grace: the API server stamps
			// the moment plus the grace, to the second.
			deleting := pods[1].DeepCopy()
			grace := int64(30)
			deleting.DeletionGracePeriodSeconds = &grace
			deleting.DeletionTimestamp = &metav1.Time{Time: at(tc.deleted).Add(30 * time.Second).Truncate(time.Second)}
			s.pod(64.9, deleting)
			// Its replacement, not Ready yet.
			replacement := newPod("web-4")
			setReady(replacement, false)
			s.pod(65.7, replacement)
			req := newRequest("a", pods[0], newPolicy("rolling", "1"))
			req.CreationTimestamp = metav1.Time{Time: at(63.3).Truncate(time.Second)}
			s.request(66.0, req)
			s.podGone(68.0, deleting)
			setReady(replacement, true)
			s.pod(72.3, replacement)
			rep := s.finish(90)
			expect(t, rep, DisruptionBudget, tc.want, "while PodDisruptionBudget shop/web allowed no disruption")
		})
	}
}
