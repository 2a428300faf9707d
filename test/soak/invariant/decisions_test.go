package invariant

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestARunAsksOncePerPod(t *testing.T) {
	run := at(0)
	cases := []struct {
		name string
		// first is the first request's result, seen at 20; second when
		// the second request is first seen, and of which run.
		first     v1beta1.ContainerRecreateRequestResult
		second    float64
		secondRun time.Time
		want      int
	}{
		{"after it succeeded", v1beta1.ResultSucceeded, 30, run, 1},
		{"before it succeeded", v1beta1.ResultSucceeded, 15, run, 1},
		{"after it failed", v1beta1.ResultFailed, 30, run, 0},
		{"in another run", v1beta1.ResultSucceeded, 30, at(3600), 0},
		{"in a run a fraction of a second apart", v1beta1.ResultSucceeded, 30, run.Add(300 * time.Millisecond), 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			pol := newPolicy("nightly", "")
			p := newPod("web-0")
			s.pod(0, p)
			s.policy(0, pol)
			first := inRun(newRequest("a", p, pol), run)
			s.request(10, first)
			complete(first, tc.first)
			s.request(20, first)
			s.request(tc.second, inRun(newRequest("b", p, pol), tc.secondRun))
			expect(t, s.finish(60), OncePerDecision, tc.want, "a second request for pod shop/web-0 in run")
		})
	}
}

func TestARuleWaitsTheCooldown(t *testing.T) {
	cases := []struct {
		name     string
		cooldown *metav1.Duration
		// gap is between the two requests' first sightings.
		gap       time.Duration
		trigger   string
		container string
		want      int
	}{
		{"default cooldown, 10 minutes", nil, 10 * time.Minute, "rule.leak", "app", 1},
		{"default cooldown, 30 minutes", nil, 30 * time.Minute, "rule.leak", "app", 0},
		{"within the skew and the creation's second", &metav1.Duration{Duration: time.Minute}, 58500 * time.Millisecond, "rule.leak", "app", 0},
		{"3 seconds short", &metav1.Duration{Duration: time.Minute}, 57 * time.Second, "rule.other", "app", 1},
		{"another container", nil, time.Minute, "rule.leak", "proxy", 0},
		{"a run is not held back", nil, time.Minute, "schedule", "app", 0},
		{"zero cooldown", &metav1.Duration{}, time.Second, "rule.leak", "app", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newSoak()
			pol := newPolicy("healer", "")
			pol.Spec.Limits.Cooldown = tc.cooldown
			p := newPod("web-0", "app", "proxy")
			s.pod(0, p)
			s.policy(0, pol)
			first := byRule(newRequest("a", p, pol, "app"), "leak")
			s.request(10, first)
			complete(first, v1beta1.ResultSucceeded)
			s.request(20, first)
			second := newRequest("b", p, pol, tc.container)
			second.Labels[v1beta1.TriggerLabel] = tc.trigger
			s.request(10+tc.gap.Seconds(), second)
			expect(t, s.finish(10+tc.gap.Seconds()+1), OncePerDecision, tc.want, "asked again by a rule within the cooldown")
		})
	}
}
