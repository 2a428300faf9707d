package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// hostileRule is a rule written to take the manager's CPU or memory.
type hostileRule struct {
	name string
	// defs are rules of the module beside recreate; body is recreate's.
	defs, body string
	// refused is the built-in a compile refusal names; empty when the
	// rule compiles and must be stopped while it runs, with an error whose
	// text holds stopped.
	refused, stopped string
}

// shared writes rules a0..aN, each an array of two references to the one
// before: aN costs N steps to build and is 2^N leaves read whole.
func shared(prefix string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s0 := [\"x\"]\n", prefix)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s%d := [%s%d, %s%d]\n", prefix, i, prefix, i-1, prefix, i-1)
	}
	return b.String()
}

// thousandMB binds big to a 1 MB string: a thousand references to it cost
// little to build and are 1 GB read whole.
const thousandMB = "big := sprintf(\"%01000000d\", [1])\n\t"

// completeGraph writes a complete graph of n nodes as a Rego object.
func completeGraph(n int) string {
	var parts []string
	for i := range n {
		var edges []string
		for j := range n {
			if i != j {
				edges = append(edges, fmt.Sprintf(`"%d"`, j))
			}
		}
		parts = append(parts, fmt.Sprintf(`"%d": [%s]`, i, strings.Join(edges, ", ")))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// hostileRules are the corpus: the constructions measured to take seconds
// to minutes, or gigabytes, in one call of a built-in before the sandbox
// bounded or denied them, and the ones the deadline and memory bound stop.
var hostileRules = []hostileRule{
	{name: "graph.reachable_paths on a complete graph", body: "x := graph.reachable_paths(" + completeGraph(10) + `, {"0"})` + "\n\tcount(x) > 0", refused: "graph.reachable_paths"},
	{name: "graph.reachable", body: `x := graph.reachable({"a": ["b"]}, {"a"})` + "\n\tcount(x) > 0", refused: "graph.reachable"},
	{name: "glob.match backtracking", body: `glob.match("*a*a*a*a*a*a*c*", [], concat("", ["a" | some i in numbers.range(1, 100)]))`, refused: "glob.match"},
	{name: "regex.globs_match backtracking", body: `regex.globs_match(concat("", [".*a" | some i in numbers.range(1, 14)]), concat("", ["a" | some i in numbers.range(1, 28)]))`, refused: "regex.globs_match"},
	{name: "strings.render_template loop", body: `x := strings.render_template("{{range 100000000}}x{{end}}", {})` + "\n\tcount(x) > 0", refused: "strings.render_template"},
	{name: "net.cidr_expand", body: `x := net.cidr_expand("10.0.0.0/8")` + "\n\tcount(x) > 0", refused: "net.cidr_expand"},

	{name: "sprintf with widths from the arguments", body: `x := sprintf(concat("", ["%*d" | some i in numbers.range(1, 2000)]), [n | some i in numbers.range(1, 4000); n := 1000000])` + "\n\tcount(x) > 0", stopped: "sprintf"},
	{name: "json.marshal_with_options with a long indent", defs: shared("d", 0),
		body: `deep := json.unmarshal(concat("", [concat("", ["[" | some i in numbers.range(1, 100)]), concat("", ["]" | some i in numbers.range(1, 100)])]))` + "\n\t" +
			`x := json.marshal_with_options(deep, {"pretty": true, "indent": concat("", ["x" | some i in numbers.range(1, 100000)])})` + "\n\tcount(x) > 0", stopped: "json.marshal_with_options"},
	{name: "a template string over a shared value", defs: shared("a", 27), body: "x := $\"{a27}\"\n\tcount(x) > 0", refused: "type checker"},
	{name: "a template string over a repeated string", body: thousandMB + "x := $\"{[big, big]}\"\n\tcount(x) > 0", stopped: "internal.template_string"},
	{name: "units.parse with a huge exponent", body: `units.parse("1e900000") > 0`, stopped: "units.parse"},
	{name: "units.parse_bytes with a huge exponent", body: `units.parse_bytes("1e900000") > 0`, stopped: "units.parse_bytes"},
	{name: "format a long number", body: `rejuv.format_number(json.unmarshal(sprintf("7%0299999d", [7]))) != ""`, stopped: "rejuv.format_number"},
	{name: "arithmetic on long numbers", body: `n := json.unmarshal(sprintf("7%0299999d", [7]))` + "\n\tn * n > 0", stopped: "mul"},
	{name: "regex.replace repeating the match", body: `s := concat("", ["0" | some i in numbers.range(1, 100000)])` + "\n\t" +
		`x := regex.replace(s, "0+", concat("", ["$0" | some i in numbers.range(1, 5000)]))` + "\n\tcount(x) > 0", stopped: "regex.replace"},
	{name: "regex.match with a long pattern", body: `p := concat("", [concat("", ["a?" | some i in numbers.range(1, 20000)]), concat("", ["a" | some i in numbers.range(1, 20000)])])` + "\n\t" +
		`regex.match(p, concat("", ["a" | some i in numbers.range(1, 20000)]))`, stopped: "regex.match"},
	{name: "object.subset of long arrays", body: `object.subset([0 | some i in numbers.range(1, 30000)], array.concat([0 | some i in numbers.range(1, 15000)], [1]))`, stopped: "object.subset"},
	{name: "comparing shared values", defs: shared("a", 28) + shared("b", 28), body: "a28 < b28", refused: "type checker"},
	{name: "unifying shared values", defs: shared("a", 40) + shared("b", 40), body: "a40 = b40", refused: "type checker"},
	{name: "the type checker on shared values", defs: shared("a", 12) + shared("b", 12), body: "x := a12 in [b12]\n\tx", refused: "type checker"},
	{name: "a function that doubles its argument", defs: "f(x) := [x, x]\n", body: "x := " + strings.Repeat("f(", 40) + "1" + strings.Repeat(")", 40) + "\n\tx = " + strings.Repeat("f(", 40) + "2" + strings.Repeat(")", 40), refused: "type checker"},
	{name: "comparing repeated strings", body: thousandMB + "xs := [big | some i in numbers.range(1, 1000)]\n\tys := [big | some i in numbers.range(1, 1000)]\n\txs < ys", stopped: "lt"},
	{name: "the largest of repeated strings", body: thousandMB + "xs := [big | some i in numbers.range(1, 1000)]\n\tmax([xs, xs]) != null", stopped: "max"},
	{name: "the union of repeated strings", body: thousandMB + "xs := [big | some i in numbers.range(1, 1000)]\n\tcount({xs} | {array.reverse(xs)}) > 0", stopped: "or"},
	{name: "object.union of repeated strings", body: thousandMB + "xs := [big | some i in numbers.range(1, 1000)]\n\tobject.union({\"k\": xs}, {\"k\": xs}) != {}", stopped: "object.union"},
	{name: "json.patch copying the whole", body: "x := json.patch({\"a\": \"x\"}, [{\"op\": \"copy\", \"from\": \"\", \"path\": sprintf(\"/k%d\", [i])} | some i in numbers.range(1, 40)])\n\tx = x", stopped: "json.patch"},
	{name: "an endless loop", body: "x := numbers.range(1, 1000)\n\tsome i in x\n\tsome j in x\n\tsome k in x\n\ti * j * k < 0",
		// The deadline or the memory bound, whichever the loop reaches
		// first on the machine.
		stopped: "evaluation stopped at the"},
	{name: "a comprehension that fills memory", body: `x := [sprintf("%0100000d", [i]) | some i in numbers.range(1, 100000)]` + "\n\tcount(x) < 0", stopped: "memory bound"},
}

// TestHostileRulesStopWithinTheirBounds: every rule of the corpus is
// refused when it is compiled, naming the built-in, or stopped while it
// runs, within its deadline and memory bound give or take what one step
// costs, with an error that names the rule and what stopped it.
func TestHostileRulesStopWithinTheirBounds(t *testing.T) {
	for _, h := range hostileRules {
		// A rule a built-in's bound stops runs under a deadline and a
		// memory bound it cannot reach on a loaded machine (building its
		// operands takes a few tens of MiB): that the built-in's bound
		// stopped it is the point. The endless loop meets the deadline or
		// the memory bound; the rule that fills memory runs under the
		// default memory bound and a deadline it cannot reach on a loaded
		// machine either (under 250 ms it reached the deadline first).
		o, within := Options{Deadline: 10 * time.Second, MemoryLimit: 200 << 20}, 10*time.Second
		switch {
		case strings.HasPrefix(h.stopped, "evaluation stopped at the"):
			o, within = Options{Deadline: 250 * time.Millisecond}, 3*time.Second
		case h.stopped == "memory bound":
			o = Options{Deadline: 10 * time.Second}
		}
		t.Run(h.name, func(t *testing.T) {
			module := "package hostile\nimport rego.v1\n" + h.defs + "recreate contains c.name if {\n\tsome c in input.containers\n\t" + h.body + "\n}\n"
			rules := []Rule{{Name: "fine", Module: notReadyRule}, {Name: "hostile", Module: module}}
			if h.refused != "" {
				start := time.Now()
				err := Check(context.Background(), rules)
				if took := time.Since(start); took > 2*time.Second {
					t.Errorf("refused after %s, want before the compiler spends seconds on it", took)
				}
				var ce CompileErrors
				if !errors.As(err, &ce) || ce[0].Rule != "hostile" || !strings.Contains(ce[0].Message, h.refused) {
					t.Fatalf("got %v, want rule hostile refused naming %s", err, h.refused)
				}
				return
			}
			p := program(t, o, rules...)
			before, start := allocated(), time.Now()
			res, err := p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
			took, alloc := time.Since(start), allocated()-before
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("stopped after %s, %s allocated: %v", took.Round(time.Millisecond), bytesText(alloc), res[1].Err)
			if res[1].Err == nil || !strings.Contains(res[1].Err.Error(), `rule "hostile"`) || !strings.Contains(res[1].Err.Error(), h.stopped) {
				t.Errorf("got %v (matches %v), want rule hostile stopped naming %s", res[1].Err, res[1].Matches, h.stopped)
			}
			if res[0].Err != nil {
				t.Errorf("the rule beside it failed too: %v", res[0].Err)
			}
			// The combined query, then the rule alone, then alone again
			// for the memory bound: each stops at its bound.
			if took >= within || alloc > 256<<20 {
				t.Errorf("took %s and allocated %s: want the sandbox to stop it within %s and 256 MiB", took, bytesText(alloc), within)
			}
		})
	}
}

// TestALiteralTableCompiles: the bound on values the type checker sees
// leaves room for a table of a few thousand entries written in a rule,
// read by key and iterated, however many times (2,000 here: 5,000 would
// be over the bound on what a policy's rules keep compiled).
func TestALiteralTableCompiles(t *testing.T) {
	var entries []string
	for i := range 2000 {
		entries = append(entries, fmt.Sprintf(`"app-%d": {"limit": %d, "owner": "team-%d"}`, i, i, i%7))
	}
	module := "package table\nimport rego.v1\nlimits := {" + strings.Join(entries, ", ") + "}\n" +
		"recreate contains c.name if {\n\tsome c in input.containers\n\tlimits[c.name].limit > 0\n\tsome name, v in limits\n\tname == c.name\n\tv.owner != \"\"\n\tv.limit > 1\n}\n" +
		"no_data contains {\"container\": c.name, \"signal\": \"x\"} if {\n\tsome c in input.containers\n\tsome v in limits\n\tv.limit < 0\n}\n"
	start := time.Now()
	if err := Check(context.Background(), []Rule{{Name: "table", Module: module}}); err != nil {
		t.Errorf("a table of 2,000 entries: %v", err)
	}
	t.Logf("a module with a table of 2,000 entries compiled in %s", time.Since(start).Round(time.Millisecond))
}
