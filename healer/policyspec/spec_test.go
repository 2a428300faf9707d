package policyspec

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

func validSpec() v1alpha1.RecreatePolicySpec {
	return v1alpha1.RecreatePolicySpec{
		Selector:   metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Containers: []string{"app", "proxy-*"},
		Schedule:   &v1alpha1.Schedule{Cron: "0 3 * * 1-5", TimeZone: "Europe/Berlin"},
		Rules: []v1alpha1.Rule{
			{Name: "stuck", Builtin: "stuck-readiness", Parameters: map[string]apiextensionsv1.JSON{"notReadyFor": {Raw: []byte(`"10m"`)}}},
			{Name: "custom", Rego: "package x\nimport rego.v1\nrecreate contains c.name if {\n\tsome c in input.containers\n\tc.restartCount > 5\n}\n"},
		},
		Windows: []v1alpha1.Window{{Cron: "* 0-6 * * *", TimeZone: "UTC"}},
	}
}

func TestParseValid(t *testing.T) {
	spec := validSpec()
	got, errs := Parse(&spec)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(got.Rules) != 2 || got.Rules[0].Builtin != "stuck-readiness" || got.Rules[0].Parameters["notReadyFor"] != float64(600) {
		t.Errorf("rules: %+v", got.Rules)
	}
	if got.Schedule.Location.String() != "Europe/Berlin" || got.Schedule.StartingDeadline != DefaultStartingDeadline {
		t.Errorf("schedule: %+v", got.Schedule)
	}
	if got.MaxUnavailable != DefaultMaxUnavailable || got.Cooldown != DefaultCooldown || got.EvaluationInterval != DefaultEvaluationInterval || got.MemoryRecurrence != DefaultMemoryRecurrence {
		t.Errorf("defaults: %+v", got)
	}
	if len(got.MemoryRules) != 0 {
		t.Errorf("memory rules %v of rules that read no memory", got.MemoryRules)
	}
}

// TestParseNamesTheMemoryRules: the built-ins that read the memory signal
// and the inline rules that name it.
func TestParseNamesTheMemoryRules(t *testing.T) {
	spec := validSpec()
	spec.Rules = append(spec.Rules,
		v1alpha1.Rule{Name: "leak", Builtin: "memory-leak"},
		v1alpha1.Rule{Name: "near", Builtin: "memory-near-limit"},
		v1alpha1.Rule{Name: "big", Rego: "package big\n\nrecreate contains c.name if {\n\tsome c in input.containers\n\tc.memory.workingSetBytes > 1\n}\n"},
	)
	spec.Limits.MemoryRecurrence = &metav1.Duration{Duration: 5 * time.Hour}
	got, errs := Parse(&spec)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if want := map[string]bool{"leak": true, "near": true, "big": true}; !maps.Equal(got.MemoryRules, want) {
		t.Errorf("memory rules %v, want %v", got.MemoryRules, want)
	}
	if got.MemoryRecurrence != 5*time.Hour {
		t.Errorf("memory recurrence %s, want 5h", got.MemoryRecurrence)
	}
}

func TestParseRejects(t *testing.T) {
	cases := map[string]struct {
		mutate func(*v1alpha1.RecreatePolicySpec)
		field  string
		detail string
	}{
		"cron":               {func(s *v1alpha1.RecreatePolicySpec) { s.Schedule.Cron = "0 25 * * *" }, "spec.schedule.cron", "not a cron expression"},
		"cron with seconds":  {func(s *v1alpha1.RecreatePolicySpec) { s.Schedule.Cron = "0 0 3 * * *" }, "spec.schedule.cron", "five fields"},
		"TZ in cron":         {func(s *v1alpha1.RecreatePolicySpec) { s.Schedule.Cron = "TZ=UTC 0 3 * * *" }, "spec.schedule.cron", "timeZone"},
		"time zone":          {func(s *v1alpha1.RecreatePolicySpec) { s.Schedule.TimeZone = "Mars/Olympus" }, "spec.schedule.timeZone", "unknown time zone"},
		"local time zone":    {func(s *v1alpha1.RecreatePolicySpec) { s.Schedule.TimeZone = "Local" }, "spec.schedule.timeZone", "IANA"},
		"starting deadline":  {func(s *v1alpha1.RecreatePolicySpec) { s.Schedule.StartingDeadlineSeconds = ptr.To[int64](0) }, "spec.schedule.startingDeadlineSeconds", "at least 1"},
		"window cron":        {func(s *v1alpha1.RecreatePolicySpec) { s.Windows[0].Cron = "every night" }, "spec.windows[0].cron", "not a cron expression"},
		"cron never fires":   {func(s *v1alpha1.RecreatePolicySpec) { s.Schedule.Cron = "0 0 30 2 *" }, "spec.schedule.cron", "never fires"},
		"window never opens": {func(s *v1alpha1.RecreatePolicySpec) { s.Windows[0].Cron = "* * 31 4 *" }, "spec.windows[0].cron", "never fires"},
		"request deadline":   {func(s *v1alpha1.RecreatePolicySpec) { s.Recreate.ActiveDeadlineSeconds = ptr.To[int64](2) }, "spec.recreate.activeDeadlineSeconds", "at least 3 seconds"},
		"window zone":        {func(s *v1alpha1.RecreatePolicySpec) { s.Windows[0].TimeZone = "CET+1" }, "spec.windows[0].timeZone", "unknown time zone"},
		"selector":           {func(s *v1alpha1.RecreatePolicySpec) { s.Selector.MatchLabels = map[string]string{"app": "-bad-"} }, "spec.selector.matchLabels", "a valid label"},
		"selector operator": {func(s *v1alpha1.RecreatePolicySpec) {
			s.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}
		}, "spec.selector.matchExpressions[0].operator", "not a valid selector operator"},
		"percent":            {func(s *v1alpha1.RecreatePolicySpec) { s.Rollout.MaxUnavailable = new(intstr.FromString("25")) }, "spec.rollout.maxUnavailable", "percentage"},
		"percent letters":    {func(s *v1alpha1.RecreatePolicySpec) { s.Rollout.MaxUnavailable = new(intstr.FromString("a%")) }, "spec.rollout.maxUnavailable", "whole number"},
		"percent over 100":   {func(s *v1alpha1.RecreatePolicySpec) { s.Rollout.MaxUnavailable = new(intstr.FromString("150%")) }, "spec.rollout.maxUnavailable", "between 1% and 100%"},
		"zero unavailable":   {func(s *v1alpha1.RecreatePolicySpec) { s.Rollout.MaxUnavailable = new(intstr.FromInt32(0)) }, "spec.rollout.maxUnavailable", "at least 1"},
		"container pattern":  {func(s *v1alpha1.RecreatePolicySpec) { s.Containers = []string{"App_1"} }, "spec.containers[0]", "not a container name"},
		"container brackets": {func(s *v1alpha1.RecreatePolicySpec) { s.Containers = []string{"app-[0-9]"} }, "spec.containers[0]", "only * and ?"},
		// Past the schema, as only a review that did not come through the
		// API server can be.
		"too many rules": {func(s *v1alpha1.RecreatePolicySpec) {
			for i := range 17 {
				s.Rules = append(s.Rules, v1alpha1.Rule{Name: fmt.Sprintf("r%d", i), Rego: "package x"})
			}
		}, "spec.rules", "must have at most 16 items"},
		"a long module": {func(s *v1alpha1.RecreatePolicySpec) {
			s.Rules = []v1alpha1.Rule{{Name: "long", Rego: strings.Repeat("#", 65537)}}
		}, "spec.rules[0].rego", "may not be more than 65536 bytes"},
		"container wildcard": {func(s *v1alpha1.RecreatePolicySpec) { s.Containers = []string{"-*"} }, "spec.containers[0]", "cannot match a container name"},
		"unknown builtin":    {func(s *v1alpha1.RecreatePolicySpec) { s.Rules[0].Builtin = "memory-leek" }, "spec.rules[0].builtin", "supported values"},
		"unknown parameter": {func(s *v1alpha1.RecreatePolicySpec) {
			s.Rules[0].Parameters["notReadyForr"] = apiextensionsv1.JSON{Raw: []byte(`"1m"`)}
		}, "spec.rules[0].parameters[notReadyForr]", "unknown parameter"},
		"mistyped parameter": {func(s *v1alpha1.RecreatePolicySpec) {
			s.Rules[0].Parameters["notReadyFor"] = apiextensionsv1.JSON{Raw: []byte(`"ten minutes"`)}
		}, "spec.rules[0].parameters[notReadyFor]", "duration"},
		"inline parameters": {func(s *v1alpha1.RecreatePolicySpec) {
			s.Rules[1].Parameters = map[string]apiextensionsv1.JSON{"a": {Raw: []byte(`1`)}}
		}, "spec.rules[1].parameters", "only to a builtin"},
		"both kinds":         {func(s *v1alpha1.RecreatePolicySpec) { s.Rules[1].Builtin = "max-age" }, "spec.rules[1]", "exactly one of builtin and rego"},
		"neither kind":       {func(s *v1alpha1.RecreatePolicySpec) { s.Rules[1].Rego = "" }, "spec.rules[1].builtin", "set builtin or rego"},
		"duplicate rule":     {func(s *v1alpha1.RecreatePolicySpec) { s.Rules[1].Name = "stuck" }, "spec.rules[1].name", "Duplicate value"},
		"nothing to trigger": {func(s *v1alpha1.RecreatePolicySpec) { s.Schedule, s.Rules = nil, nil }, "spec.rules", "a schedule, rules or restartAt"},
		"evaluation interval": {func(s *v1alpha1.RecreatePolicySpec) {
			s.EvaluationInterval = &metav1.Duration{Duration: time.Millisecond}
		}, "spec.evaluationInterval", "at least 1s"},
		"negative cooldown": {func(s *v1alpha1.RecreatePolicySpec) { s.Limits.Cooldown = &metav1.Duration{Duration: -time.Minute} }, "spec.limits.cooldown", "negative"},
		"negative memory recurrence": {func(s *v1alpha1.RecreatePolicySpec) {
			s.Limits.MemoryRecurrence = &metav1.Duration{Duration: -time.Minute}
		}, "spec.limits.memoryRecurrence", "negative"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := validSpec()
			tc.mutate(&spec)
			_, errs := Parse(&spec)
			if len(errs) == 0 {
				t.Fatalf("accepted; want an error on %s", tc.field)
			}
			for _, e := range errs {
				if e.Field == tc.field && strings.Contains(e.Error(), tc.detail) {
					return
				}
			}
			t.Errorf("got %v; want an error on %s containing %q", errs.ToAggregate(), tc.field, tc.detail)
		})
	}
}

func TestUnavailableLimit(t *testing.T) {
	for _, tc := range []struct {
		b        UnavailableLimit
		selected int
		want     int
	}{
		{UnavailableLimit{Percent: 25}, 6, 1}, {UnavailableLimit{Percent: 25}, 8, 2}, {UnavailableLimit{Percent: 25}, 0, 1}, {UnavailableLimit{Percent: 100}, 6, 6},
		{UnavailableLimit{Count: 2}, 6, 2}, {UnavailableLimit{Count: 2}, 1, 2},
	} {
		if got := tc.b.Of(tc.selected); got != tc.want {
			t.Errorf("%+v of %d: got %d, want %d", tc.b, tc.selected, got, tc.want)
		}
	}
}

func TestWindowContains(t *testing.T) {
	w, errs := parseWindow(&v1alpha1.Window{Cron: "* 0-6 * * 1-5", TimeZone: "Europe/Berlin"}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	berlin := w.Location
	for _, tc := range []struct {
		at   time.Time
		want bool
	}{
		{time.Date(2026, 11, 23, 0, 0, 0, 0, berlin), true},     // Monday midnight
		{time.Date(2026, 11, 23, 6, 59, 59, 0, berlin), true},   // last second
		{time.Date(2026, 11, 23, 7, 0, 0, 0, berlin), false},    // just after
		{time.Date(2026, 11, 22, 3, 0, 0, 0, berlin), false},    // Sunday
		{time.Date(2026, 11, 23, 5, 30, 0, 0, time.UTC), true},  // 06:30 in Berlin
		{time.Date(2026, 11, 23, 6, 30, 0, 0, time.UTC), false}, // 07:30 in Berlin
	} {
		if got := w.Contains(tc.at); got != tc.want {
			t.Errorf("%s: got %v, want %v", tc.at, got, tc.want)
		}
	}
}

func TestScheduleReadsTimeZone(t *testing.T) {
	s, errs := parseSchedule(&v1alpha1.Schedule{Cron: "30 2 * * *", TimeZone: "Europe/Berlin"}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	// Summer time: 02:30 CEST is 00:30 UTC.
	if got, want := s.Next(time.Date(2027, 6, 1, 12, 0, 0, 0, time.UTC)), time.Date(2027, 6, 2, 0, 30, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("summer: got %s, want %s", got.UTC(), want)
	}
	// Winter time: 02:30 CET is 01:30 UTC.
	if got, want := s.Next(time.Date(2027, 12, 1, 12, 0, 0, 0, time.UTC)), time.Date(2027, 12, 2, 1, 30, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("winter: got %s, want %s", got.UTC(), want)
	}
}

func TestScheduleFollowsDaylightSaving(t *testing.T) {
	s, errs := parseSchedule(&v1alpha1.Schedule{Cron: "30 2 * * *", TimeZone: "Europe/Berlin"}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	cases := []struct {
		name  string
		after time.Time
		want  time.Time
	}{
		// 2027-03-28: clocks jump from 02:00 to 03:00; 02:30 does not exist,
		// the run fires at the jump (01:00 UTC), not the next day.
		{"spring forward", time.Date(2027, 3, 27, 12, 0, 0, 0, time.UTC), time.Date(2027, 3, 28, 1, 0, 0, 0, time.UTC)},
		{"day after spring forward", time.Date(2027, 3, 28, 1, 0, 0, 0, time.UTC), time.Date(2027, 3, 29, 0, 30, 0, 0, time.UTC)},
		// 2027-10-31: clocks go back from 03:00 to 02:00; 02:30 happens twice
		// (00:30 and 01:30 UTC), the run fires once.
		{"fall back, first pass", time.Date(2027, 10, 30, 12, 0, 0, 0, time.UTC), time.Date(2027, 10, 31, 0, 30, 0, 0, time.UTC)},
		{"fall back, no second fire", time.Date(2027, 10, 31, 0, 30, 0, 0, time.UTC), time.Date(2027, 11, 1, 1, 30, 0, 0, time.UTC)},
	}
	for _, tc := range cases {
		if got := s.Next(tc.after); !got.Equal(tc.want) {
			t.Errorf("%s: next after %s is %s, want %s", tc.name, tc.after, got.UTC(), tc.want)
		}
	}
	hourly, _ := parseSchedule(&v1alpha1.Schedule{Cron: "15 * * * *", TimeZone: "Europe/Berlin"}, nil)
	// An hourly schedule runs every hour of the day the clocks go back,
	// the repeated hour once: 00:15 and then 02:15 UTC (02:15 CET is 01:15 UTC
	// a second time and is skipped).
	if got, want := hourly.Next(time.Date(2027, 10, 31, 0, 15, 0, 0, time.UTC)), time.Date(2027, 10, 31, 2, 15, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("hourly through the repeated hour: %s, want %s", got.UTC(), want)
	}
}

// TestCandidatesOnlyContainersTheKubeletRestarts: a container is a
// candidate only when the kubelet would start it again once stopped, by
// the pod's restartPolicy or the container's own (restart rules); the
// others matched are Unrestartable.
func TestCandidatesOnlyContainersTheKubeletRestarts(t *testing.T) {
	always, never := corev1.ContainerRestartPolicyAlways, corev1.ContainerRestartPolicyNever
	onFailure := corev1.ContainerRestartPolicyOnFailure
	for _, tt := range []struct {
		name     string
		policy   corev1.RestartPolicy
		own      map[string]corev1.ContainerRestartPolicy
		patterns Containers
		want     []string
		left     []string
	}{
		{name: "default", want: []string{"proxy", "app", "worker"}},
		{name: "Always", policy: corev1.RestartPolicyAlways, want: []string{"proxy", "app", "worker"}},
		{name: "OnFailure", policy: corev1.RestartPolicyOnFailure, want: []string{"proxy"}, left: []string{"app", "worker"}},
		{name: "Never", policy: corev1.RestartPolicyNever, want: []string{"proxy"}, left: []string{"app", "worker"}},
		{name: "app's own Never", policy: corev1.RestartPolicyAlways, own: map[string]corev1.ContainerRestartPolicy{"app": never},
			want: []string{"proxy", "worker"}, left: []string{"app"}},
		{name: "app's own OnFailure", own: map[string]corev1.ContainerRestartPolicy{"app": onFailure},
			want: []string{"proxy", "worker"}, left: []string{"app"}},
		{name: "worker's own Always in a Never pod", policy: corev1.RestartPolicyNever, own: map[string]corev1.ContainerRestartPolicy{"worker": always},
			want: []string{"proxy", "worker"}, left: []string{"app"}},
		{name: "only app named, its own Never", own: map[string]corev1.ContainerRestartPolicy{"app": never}, patterns: Containers{"app"},
			left: []string{"app"}},
	} {
		pod := &corev1.Pod{Spec: corev1.PodSpec{
			RestartPolicy:  tt.policy,
			InitContainers: []corev1.Container{{Name: "setup"}, {Name: "proxy", RestartPolicy: &always}},
			Containers:     []corev1.Container{{Name: "app"}, {Name: "worker"}},
		}}
		for i := range pod.Spec.Containers {
			if p, ok := tt.own[pod.Spec.Containers[i].Name]; ok {
				pod.Spec.Containers[i].RestartPolicy = &p
			}
		}
		if got := tt.patterns.Candidates(pod); !slices.Equal(got, tt.want) {
			t.Errorf("%s: candidates %v, want %v", tt.name, got, tt.want)
		}
		if got := tt.patterns.Unrestartable(pod); !slices.Equal(got, tt.left) {
			t.Errorf("%s: unrestartable %v, want %v", tt.name, got, tt.left)
		}
	}
}
