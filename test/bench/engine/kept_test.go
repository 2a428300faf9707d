package engine

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/test/heap"
)

// keptPasses is how many passes the engine makes over the fleet before
// what it keeps is measured.
const keptPasses = 5

// keptBytes is what the engine keeps between passes over the fleet, in
// bytes of live heap.
type keptBytes struct {
	// pods is the pod objects, built before the engine.
	pods int64
	// programs is the engine with its programs compiled, before any pass.
	programs int64
	// engine is the engine after the passes: its programs, its cache of
	// pods' documents and the results it kept.
	engine int64
}

// benchmarkKept prints what the engine keeps a pod between passes: each
// policy of the benchmark alone over its fleet, and all of them over the
// fleet in trouble, each with its own history of the containers (its own
// recreations), as policies that select the same pods have. The windows
// stand still, or move a sample before each pass after the first.
func benchmarkKept(b *testing.B) {
	type row struct {
		names   []string
		trouble bool
		rules   [][]BuiltinRule
	}
	var rows []row
	var all row
	for _, pol := range policies {
		rows = append(rows, row{names: []string{pol.name}, trouble: pol.trouble, rules: [][]BuiltinRule{pol.rules}})
		all.names, all.rules = append(all.names, pol.name), append(all.rules, pol.rules)
		all.trouble = all.trouble || pol.trouble
	}
	rows = append(rows, all)
	// The process's first engine also builds what OPA builds once for all
	// (about 500 KiB), which is not what an engine keeps.
	programsOf(b, policy.NewEngine(policy.Options{}), all.rules)

	type measured struct {
		row
		still, moving keptBytes
	}
	var out []measured
	for _, r := range rows {
		out = append(out, measured{r, measureKept(b, r.rules, r.trouble, false), measureKept(b, r.rules, r.trouble, true)})
	}

	fmt.Printf("\nkept between passes: the engine's live heap after %d passes over %d pods less the live heap before it was created, a pod;\n", keptPasses, fleet)
	fmt.Printf("compiled: the engine with its programs before any pass, in the kept figures; the pod objects (%d B/pod) were built before the engine, so they are not in them\n",
		out[0].still.pods/fleet)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "fleet\tpolicies\tcompiled KiB\tkept B/pod, windows still\tkept B/pod, windows moving\t")
	for _, m := range out {
		fleetName := "healthy"
		if m.trouble {
			fleetName = "in trouble"
		}
		fmt.Fprintf(w, "%s\t%s\t%.0f\t%d\t%d\t\n", fleetName, strings.Join(m.names, " + "), float64(m.still.programs)/1024, m.still.engine/fleet, m.moving.engine/fleet)
	}
	_ = w.Flush()
}

// measureKept builds the fleet, each policy's targets of it, and an engine
// with the policies' programs, and has the engine evaluate every pod
// keptPasses times.
func measureKept(b *testing.B, rules [][]BuiltinRule, trouble, move bool) keptBytes {
	ctx := context.Background()
	start := heap.Live()
	pods := fleetPods()
	withPods := heap.Live()
	targets := make([][]policy.Target, len(rules))
	for k := range rules {
		targets[k] = Targets(pods, trouble, now)
		for _, t := range targets[k] {
			for i := range t.Containers {
				t.Containers[i].Recreations = k
			}
		}
	}

	before := heap.Live()
	engine := policy.NewEngine(policy.Options{Deadline: time.Second})
	programs := programsOf(b, engine, rules)
	compiled := heap.Live()
	for pass := range keptPasses {
		if move && pass > 0 {
			for _, ts := range targets {
				MoveWindows(ts)
			}
		}
		for i := range fleet {
			for k, p := range programs {
				res, err := p.Evaluate(ctx, targets[k][i], now)
				if err != nil {
					b.Fatal(err)
				}
				hits(b, res)
			}
		}
	}
	after := heap.Live()
	runtime.KeepAlive(targets)
	runtime.KeepAlive(engine)
	return keptBytes{pods: withPods - start, programs: compiled - before, engine: after - before}
}

// programsOf compiles each policy's rules in the engine.
func programsOf(b *testing.B, engine *policy.Engine, rules [][]BuiltinRule) []*policy.Program {
	programs := make([]*policy.Program, len(rules))
	for k, builtins := range rules {
		prules, err := PolicyRules(builtins)
		if err != nil {
			b.Fatal(err)
		}
		if programs[k], err = engine.Program(context.Background(), policy.Ref{Namespace: "shop", Name: fmt.Sprint("policy-", k), Generation: 1}, prules); err != nil {
			b.Fatal(err)
		}
	}
	return programs
}
