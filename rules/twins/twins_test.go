package twins

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/rules"
)

var now = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// TestEveryBuiltinHasItsTwin: each built-in rule has a twin, built from
// its parameters at their defaults, and every twin is named after a
// built-in rule (a renamed rule would leave its twin unused).
func TestEveryBuiltinHasItsTwin(t *testing.T) {
	for _, r := range rules.Builtins() {
		params, err := r.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		if Of(r, params) == nil {
			t.Errorf("built-in %s: no twin", r.Name)
		}
	}
	for name := range twins {
		if _, ok := rules.Lookup(name); !ok {
			t.Errorf("twin %s: no built-in rule of that name", name)
		}
	}
	if Of(rules.Rule{Name: "inline"}, nil) != nil {
		t.Error("a rule that is no built-in has a twin")
	}
}

// TestTwinsJudgeAsTheirModules evaluates each rule with a twin over
// thousands of random containers (statuses, start times, readiness, the
// previous instance's end, memory windows, limits, restarts and Rejuv's
// recreations, some exactly at a threshold or a nanosecond off it) at
// random times, at its defaults and at random parameters, with the module
// (OPA's evaluator) and with the twin, and wants the same matches, reasons
// and no-data results for every pod. The premise, that every way the
// module decides was taken, is checked by the reasons' kinds seen.
func TestTwinsJudgeAsTheirModules(t *testing.T) {
	ctx := context.Background()
	want := map[string][]string{
		"memory-leak":       {"already", "horizon", "growthHorizon", "no limit", "killed", "no data: memory", "no data: memory.history"},
		"memory-near-limit": {"near", "no data: memory", "no data: resources.limits.memory"},
		"stuck-readiness":   {"not ready", "no data: notReadySince"},
		"stuck-startup":     {"startup", "no data: started", "no data: startedAt"},
		"max-age":           {"running for", "no data: startedAt"},
		"restart-storm":     {"restarted, with a reason", "restarted, exit code alone", "no data: lastTermination.finishedAt"},
	}
	if len(want) != len(twins) {
		t.Fatalf("the test knows %d twins' reasons, there are %d twins", len(want), len(twins))
	}
	for name := range twins {
		t.Run(name, func(t *testing.T) {
			builtin, _ := rules.Lookup(name)
			rng := rand.New(rand.NewPCG(7, uint64(len(name))))
			kinds := map[string]int{}
			for round := range 12 {
				given, spans := map[string]any{}, []time.Duration(nil)
				if round > 0 {
					given, spans = randomParameters(rng, name)
				}
				params, err := builtin.Resolve(given)
				if err != nil {
					t.Fatalf("parameters %v: %v", given, err)
				}
				if round == 0 {
					spans = defaultSpans(builtin)
				}
				rego := []policy.Rule{{Name: "r", Builtin: name, Module: builtin.Source, Parameters: params}}
				twin := []policy.Rule{{Name: "r", Builtin: name, Module: builtin.Source, Parameters: params, Native: Of(builtin, params)}}
				ref := policy.Ref{Namespace: "ns", Name: fmt.Sprintf("p%d", round), Generation: 1}
				byRego, err := policy.NewEngine(policy.Options{Deadline: 10 * time.Second}).Program(ctx, ref, rego)
				if err != nil {
					t.Fatal(err)
				}
				byTwin, err := policy.NewEngine(policy.Options{Deadline: 10 * time.Second}).Program(ctx, ref, twin)
				if err != nil {
					t.Fatal(err)
				}
				for i := range 400 {
					// A few pods at each time, as a pass evaluates them.
					at := now.Add(time.Duration(i/4) * 7919 * time.Millisecond).Add(time.Duration(rng.IntN(1e9)))
					target := randomTarget(rng, i, params, spans, at)
					want, err := byRego.Evaluate(ctx, target, at)
					if err != nil {
						t.Fatal(err)
					}
					got, err := byTwin.Evaluate(ctx, target, at)
					if err != nil {
						t.Fatal(err)
					}
					if want[0].Err != nil {
						t.Fatalf("the module failed: %v", want[0].Err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("parameters %v, pod %d at %s (%s):\n twin   %+v\n module %+v", given, i, at.Format(time.RFC3339Nano), describe(target), got, want)
					}
					for _, m := range want[0].Matches {
						kinds[reasonKind(m.Reason)]++
					}
					for _, n := range want[0].NoData {
						kinds["no data: "+n.Signal]++
					}
				}
			}
			for _, k := range want[name] {
				if kinds[k] < 5 {
					t.Errorf("%s: %d pods judged so; the random pods must take every way the module decides", k, kinds[k])
				}
			}
			t.Logf("judged alike: %v", kinds)
		})
	}
}

// reasonKind tells which of the modules' reasons a reason is.
func reasonKind(reason string) string {
	switch {
	case strings.HasPrefix(reason, "the previous instance was killed"):
		return "killed"
	case strings.Contains(reason, " is already "):
		return "already"
	case strings.Contains(reason, "(growthHorizon "):
		return "growthHorizon"
	case strings.Contains(reason, "(horizon "):
		return "horizon"
	case strings.Contains(reason, "% of the ") && strings.Contains(reason, "(threshold"):
		return "near"
	case strings.HasPrefix(reason, "not ready for "):
		return "not ready"
	case strings.HasPrefix(reason, "startup not finished "):
		return "startup"
	case strings.HasPrefix(reason, "running for "):
		return "running for"
	case strings.HasPrefix(reason, "restarted ") && strings.Contains(reason, "(exit code"):
		return "restarted, exit code alone"
	case strings.HasPrefix(reason, "restarted "):
		return "restarted, with a reason"
	}
	return "no limit"
}

// durations are the time parameters' values the test gives: whole units,
// fractions of a second that are no binary fraction, and random ones.
func duration(rng *rand.Rand) string {
	return []string{"10m", "1.1s", "90s", "1h30m", "336h", "0.3s", fmt.Sprintf("%dms", rng.IntN(3_600_000)+1), fmt.Sprintf("%ds", rng.IntN(86_400)+1)}[rng.IntN(8)]
}

// randomParameters are random parameters of rule, and the spans of its
// time parameters, which some containers are put exactly at.
func randomParameters(rng *rand.Rand, rule string) (map[string]any, []time.Duration) {
	spans := func(given map[string]any, names ...string) []time.Duration {
		var out []time.Duration
		for _, n := range names {
			d, _ := time.ParseDuration(given[n].(string))
			out = append(out, d)
		}
		return out
	}
	switch rule {
	case "memory-near-limit":
		return map[string]any{"fraction": []float64{0.5, 0.75, 0.9, 0.95, 0.999999, 1, float64(rng.IntN(1000)+1) / 1000}[rng.IntN(7)]}, nil
	case "stuck-readiness":
		g := map[string]any{"notReadyFor": duration(rng)}
		return g, spans(g, "notReadyFor")
	case "stuck-startup":
		g := map[string]any{"startupFor": duration(rng)}
		return g, spans(g, "startupFor")
	case "max-age":
		g := map[string]any{"maxAge": duration(rng), "jitter": []string{"0s", "1h", "17m", "1.1s", duration(rng)}[rng.IntN(5)]}
		return g, spans(g, "maxAge")
	case "restart-storm":
		g := map[string]any{"minRestarts": rng.IntN(10) + 1, "window": duration(rng)}
		return g, spans(g, "window")
	}
	return map[string]any{
		"minGrowthPerHour":    fmt.Sprintf("%dMi", rng.IntN(60)+1),
		"minObservation":      fmt.Sprintf("%dm", rng.IntN(120)+1),
		"minSamples":          rng.IntN(30) + 1,
		"minFit":              []float64{0.5, 0.8, 0.9, float64(rng.IntN(100)+1) / 100}[rng.IntN(4)],
		"minSustained":        []float64{0.5, 0.8, 1, float64(rng.IntN(100)+1) / 100}[rng.IntN(4)],
		"oomLifetimeFraction": []float64{0.5, 0.75, 1}[rng.IntN(3)],
		"limitFraction":       []float64{0.8, 0.9, 0.95, 1}[rng.IntN(4)],
		"growthHorizon":       fmt.Sprintf("%dh", rng.IntN(24)+1),
		"horizon":             fmt.Sprintf("%dm", rng.IntN(180)+1),
	}, nil
}

// defaultSpans are the spans of the rule's time parameters at their
// defaults.
func defaultSpans(r rules.Rule) []time.Duration {
	var out []time.Duration
	for _, p := range r.Parameters {
		if s, ok := p.Default.(string); ok && p.Type == rules.TypeDuration && p.Name != "jitter" {
			if d, err := time.ParseDuration(s); err == nil {
				out = append(out, d)
			}
		}
	}
	return out
}

// randomTarget is a pod of up to three containers, each with or without a
// status (running, waiting or terminated; ready or not; started, not or
// not said; restarts, Rejuv's recreations, a previous instance ended for
// some reason), a memory limit, a memory window, and a time it became not
// ready. Its times are around now and the thresholds of params and
// spans; some exactly at now less a span, or a nanosecond off.
func randomTarget(rng *rand.Rand, i int, params map[string]any, spans []time.Duration, now time.Time) policy.Target {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("pod-%d", i), UID: types.UID(fmt.Sprintf("%08x-%04x-4%03x", rng.Uint32(), rng.IntN(1<<16), rng.IntN(1<<12))), ResourceVersion: fmt.Sprint(i)}}
	// at is a time before now: mostly within twice the spans, now and then
	// exactly a span before now, a nanosecond off, or never (zero).
	at := func() time.Time {
		switch n := rng.IntN(20); {
		case n == 0:
			return time.Time{}
		case n <= 4 && len(spans) > 0:
			return now.Add(-spans[rng.IntN(len(spans))] + time.Duration(rng.IntN(3)-1))
		case len(spans) > 0:
			return now.Add(-time.Duration(rng.Float64() * 2 * float64(spans[rng.IntN(len(spans))])))
		}
		return now.Add(-time.Duration(rng.Int64N(int64(48 * time.Hour))))
	}
	var candidates []policy.ContainerCandidate
	for j := range rng.IntN(3) + 1 {
		name := fmt.Sprintf("c%d", j)
		c := corev1.Container{Name: name, Image: "app"}
		limit := int64(0)
		if rng.IntN(5) > 0 {
			limit = []int64{1_000_000, 512 << 20, 1 << 30, int64(rng.IntN(4<<30) + 1)}[rng.IntN(4)]
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(limit, resource.BinarySI)}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
		restarts := int32(rng.IntN(15))
		if rng.IntN(10) > 0 {
			st := corev1.ContainerStatus{Name: name, Ready: rng.IntN(2) == 0, RestartCount: restarts}
			switch rng.IntN(10) {
			case 0:
				st.State.Waiting = &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}
			case 1:
				st.State.Terminated = &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}
			default:
				st.State.Running = &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at())}
			}
			switch rng.IntN(3) {
			case 0:
				st.Started = new(true)
			case 1:
				st.Started = new(false)
			}
			if rng.IntN(2) == 0 {
				finished := at()
				lived := time.Duration(rng.IntN(4*3600)+1) * time.Second
				term := &corev1.ContainerStateTerminated{Reason: []string{"OOMKilled", "OOMKilled", "Error", "Completed", ""}[rng.IntN(5)], ExitCode: int32(rng.IntN(256)),
					FinishedAt: metav1.NewTime(finished)}
				if !finished.IsZero() && rng.IntN(10) > 0 {
					term.StartedAt = metav1.NewTime(finished.Add(-lived))
				}
				st.LastTerminationState.Terminated = term
			}
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, st)
		}
		candidate := policy.ContainerCandidate{Name: name, Memory: randomWindow(rng, limit, params), Recreations: rng.IntN(int(restarts) + 3)}
		if rng.IntN(2) == 0 {
			candidate.NotReadySince = at()
		}
		candidates = append(candidates, candidate)
	}
	return policy.Target{Pod: pod, Containers: candidates}
}

func randomWindow(rng *rand.Rand, limit int64, params map[string]any) *policy.MemoryWindow {
	if rng.IntN(8) == 0 {
		return nil
	}
	scale := float64(limit)
	if scale == 0 {
		scale = 1 << 30
	}
	m := &policy.MemoryWindow{
		WorkingSetBytes: int64(rng.Float64() * 1.2 * scale),
		Samples:         rng.IntN(40),
		WindowSeconds:   rng.Float64() * 7200,
		R2:              rng.Float64(),
	}
	slope := (rng.Float64() - 0.2) * scale / 3600 // up to the whole limit an hour
	m.SlopeBytesPerSecond = slope
	m.StartSlopeBytesPerSecond = slope * (0.5 + rng.Float64())
	m.EndSlopeBytesPerSecond = slope * (0.5 + rng.Float64())
	m.LatestSlopeBytesPerSecond = slope * (0.5 + rng.Float64())
	// Now and then exactly at a threshold.
	if v, ok := params["minObservation"].(float64); ok && rng.IntN(10) == 0 {
		m.WindowSeconds = v
	}
	if v, ok := params["minSamples"].(int64); ok && rng.IntN(10) == 0 {
		m.Samples = int(v)
	}
	if v, ok := params["minFit"].(float64); ok && rng.IntN(10) == 0 {
		m.R2 = v
	}
	if rng.IntN(4) > 0 {
		// Mostly a leak that fits.
		m.R2 = 0.8 + 0.2*rng.Float64()
		m.Samples += 10
		m.WindowSeconds += 1800
		m.SlopeBytesPerSecond = max(m.SlopeBytesPerSecond, 1)
		m.StartSlopeBytesPerSecond, m.EndSlopeBytesPerSecond, m.LatestSlopeBytesPerSecond = m.SlopeBytesPerSecond, m.SlopeBytesPerSecond*1.1, m.SlopeBytesPerSecond
	}
	if v, ok := params["fraction"].(float64); ok && limit == 1_000_000 && rng.IntN(4) == 0 {
		// Exactly at the fraction of the limit, in whole bytes.
		m.WorkingSetBytes = int64(v * 1_000_000)
	}
	return m
}

func describe(t policy.Target) string {
	var parts []string
	for i, c := range t.Containers {
		part := fmt.Sprintf("%s limit %v notReadySince %s recreations %d", c.Name, t.Pod.Spec.Containers[i].Resources.Limits.Memory(), c.NotReadySince.Format(time.RFC3339Nano), c.Recreations)
		if c.Memory != nil {
			part += fmt.Sprintf(" window %+v", *c.Memory)
		}
		for _, st := range t.Pod.Status.ContainerStatuses {
			if st.Name == c.Name {
				part += fmt.Sprintf(" status %+v", st)
			}
		}
		parts = append(parts, part)
	}
	return "uid " + string(t.Pod.UID) + ": " + strings.Join(parts, "; ")
}
