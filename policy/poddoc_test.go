package policy

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rejuv-dev/rejuv/policy/policytest"
	"github.com/rejuv-dev/rejuv/rules"
)

// builtinRules are every built-in rule with its default parameters.
func builtinRules(t *testing.T) []Rule {
	t.Helper()
	var out []Rule
	for _, r := range rules.Builtins() {
		params, err := r.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Rule{Name: r.Name, Builtin: r.Name, Module: r.Source, Parameters: params})
	}
	return out
}

// A pod's next resourceVersion takes over what did not change from the
// one before; the results must be those of a conversion from scratch.
func TestChangedPodGivesTheResultsOfAFreshConversion(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	p := program(t, Options{}, builtinRules(t)...)
	// The same rules without a cache of pods: every pod converted afresh.
	freshEngine := NewEngine(Options{})
	freshEngine.opts.Pods = nil
	fresh, err := freshEngine.Program(ctx, Ref{Namespace: "shop", Name: "web"}, builtinRules(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		tg := Target{Pod: policytest.Pod(i, now), Containers: []ContainerCandidate{
			{Name: "app", Memory: &MemoryWindow{WorkingSetBytes: 480 << 20, Samples: 20, WindowSeconds: 3600, SlopeBytesPerSecond: 100, R2: 0.9}},
			{Name: "proxy"},
		}}
		if _, err := p.Evaluate(ctx, tg, now); err != nil {
			t.Fatal(err)
		}
		before, _ := p.opts.Pods.cached(tg.Pod)
		for round := range 6 {
			// The app container restarts; from the third round on the
			// proxy loses its memory window; the last round changes
			// nothing but the resourceVersion.
			if round < 5 {
				policytest.Restart(tg.Pod, "app", now.Add(-time.Duration(round)*time.Minute))
			} else {
				tg.Pod.ResourceVersion += "0"
			}
			if round == 2 {
				tg.Containers[1].Memory = &MemoryWindow{WorkingSetBytes: 10 << 20}
			}
			got, err := p.Evaluate(ctx, tg, now)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fresh.Evaluate(ctx, tg, now)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("pod %d round %d: %+v, converted afresh %+v", i, round, got, want)
			}
			doc, _ := p.opts.Pods.cached(tg.Pod)
			for _, c := range tg.Containers {
				entry, ok := doc.latest(c.Name)
				facts, _ := findContainerFacts(tg.Pod, c.Name)
				if afresh := newContainerEntry(facts).entry(&c); !ok || ast.Compare(entry.term(), afresh.term()) != 0 {
					t.Fatalf("pod %d round %d: %s's entry is %v, converted afresh %v", i, round, c.Name, entry.term(), afresh.term())
				}
			}
		}
		after, _ := p.opts.Pods.cached(tg.Pod)
		if after == before || after.prev != nil {
			t.Fatalf("pod %d: the document was not replaced, or still holds the one before", i)
		}
		if before.part("proxy") != nil && after.part("proxy") != before.part("proxy") {
			// The proxy container never changed: its entry is taken over
			// from one document to the next.
			t.Errorf("pod %d: the proxy's entry was converted again", i)
		}
	}
}

// No-data results taken over from the resourceVersion before must follow a
// change of the pod fields a rule reads.
func TestNoDataFollowsThePod(t *testing.T) {
	now := time.Now()
	p := program(t, Options{}, Rule{Name: "label", Module: `package a
recreate contains "app" if false
no_data contains {"container": c.name, "signal": "label"} if {
	some c in input.containers
	not input.pod.metadata.labels.tier
}`})
	tg := target(now, "app")
	for i, label := range []string{"", "web", "web", ""} {
		tg.Pod.ResourceVersion += "1"
		delete(tg.Pod.Labels, "tier")
		if label != "" {
			tg.Pod.Labels["tier"] = label
		}
		res, err := p.Evaluate(context.Background(), tg, time.Now())
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		if got, want := len(res[0].NoData), map[bool]int{true: 1, false: 0}[label == ""]; got != want {
			t.Errorf("step %d (tier %q): %d no-data results, want %d", i, label, got, want)
		}
	}
}

// Every built-in rule, pods changing between rounds and each goroutine at
// its own time: the caches of pods, no-data results and time-only rules
// under concurrent use (run with -race) give the results of a fresh
// evaluation.
func TestBuiltinsConcurrently(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	p := program(t, Options{}, builtinRules(t)...)
	freshEngine := NewEngine(Options{})
	freshEngine.opts.Pods = nil
	fresh, err := freshEngine.Program(ctx, Ref{Namespace: "shop", Name: "web"}, builtinRules(t))
	if err != nil {
		t.Fatal(err)
	}
	targets := make([]Target, 20)
	for i := range targets {
		targets[i] = Target{Pod: policytest.Pod(i, now), Containers: []ContainerCandidate{{Name: "app"}, {Name: "proxy"}}}
	}
	for round := range 3 {
		if round > 0 {
			for i := range targets {
				pod := targets[i].Pod.DeepCopy()
				policytest.Restart(pod, "app", now.Add(-time.Duration(i)*time.Minute))
				targets[i].Pod = pod
			}
		}
		var wg sync.WaitGroup
		for g := range 4 {
			at := now.Add(time.Duration(g) * 7 * time.Minute)
			wg.Go(func() {
				for i, tg := range targets {
					got, err := p.Evaluate(ctx, tg, at)
					if err != nil {
						t.Errorf("round %d pod %d: %v", round, i, err)
						return
					}
					want, err := fresh.Evaluate(ctx, tg, at)
					if err != nil {
						t.Errorf("round %d pod %d: %v", round, i, err)
						return
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("round %d pod %d at +%s: %+v, afresh %+v", round, i, at.Sub(now), got, want)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}

// latest gives the newest entry built for the container name in d.
func (d *podDoc) latest(name string) (candidateEntry, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, e := range slices.Backward(d.candidates) {
		if e.candidate.Name == name {
			return e, true
		}
	}
	return candidateEntry{}, false
}

// A pod's document keeps, of each container, the entry of each history in
// use and no other: evaluated again unchanged it keeps the entries it has
// (and builds none again, so two or three policies on one pod do not undo
// each other's), and as the memory windows move each program's new entry
// takes the place of the one before.
func TestThePodKeepsAnEntryPerContainerAndHistoryInUse(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	ctx := context.Background()
	leak := `package a
recreate contains c.name if {
	some c in input.containers
	c.memory.working_set_bytes > 1000000000
}`
	for _, tc := range []struct {
		name     string
		programs int
		// shared: the programs have the same history of the containers.
		shared, move bool
		want         int
	}{
		{"one policy", 1, false, false, 2},
		{"one policy, windows moving", 1, false, true, 2},
		{"two policies", 2, false, false, 4},
		{"three policies", 3, false, false, 6},
		{"three policies, windows moving", 3, false, true, 6},
		{"two policies of one history, windows moving", 2, true, true, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := NewEngine(Options{})
			pod := policytest.Pod(3, now)
			var programs []*Program
			var targets []Target
			for k := range tc.programs {
				p, err := e.Program(ctx, Ref{Namespace: "shop", Name: fmt.Sprint("p", k)}, []Rule{{Name: "leak", Module: leak}})
				if err != nil {
					t.Fatal(err)
				}
				recreations := k
				if tc.shared {
					recreations = 0
				}
				tg := Target{Pod: pod}
				for _, name := range []string{"app", "proxy"} {
					tg.Containers = append(tg.Containers, ContainerCandidate{Name: name, Recreations: recreations, Memory: &MemoryWindow{WorkingSetBytes: 100 << 20, Samples: 20}})
				}
				programs, targets = append(programs, p), append(targets, tg)
			}
			var first []*entryID
			for pass := range 5 {
				for k, p := range programs {
					if tc.move {
						for i := range targets[k].Containers {
							m := *targets[k].Containers[i].Memory
							m.Samples = 20 + pass
							targets[k].Containers[i].Memory = &m
						}
					}
					if _, err := p.Evaluate(ctx, targets[k], now); err != nil {
						t.Fatal(err)
					}
				}
				doc, _ := e.Pods().cached(pod)
				doc.mu.Lock()
				var ids []*entryID
				for _, c := range doc.candidates {
					ids = append(ids, c.id)
				}
				doc.mu.Unlock()
				if len(ids) != tc.want {
					t.Fatalf("pass %d: the pod keeps %d entries, want %d", pass, len(ids), tc.want)
				}
				if pass == 0 {
					first = ids
				} else if !tc.move && !sameEntries(ids, first) {
					t.Fatalf("pass %d: the pod's entries were made again", pass)
				}
			}
		})
	}
}

// sameEntries reports whether a and b hold the same entries, in any order.
func sameEntries(a, b []*entryID) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return len(a) == len(b)
}
