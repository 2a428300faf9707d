package policy

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/rules"
)

// maxRegoBytes is the CRD's maxLength of a rule's rego (policyspec's
// MaxRegoBytes, which imports this package).
const maxRegoBytes = 65536

// tableRule is an inline rule of about size bytes, most of them a literal
// table of ones: the most AST terms a module of that size can hold.
func tableRule(name string, size int) Rule {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\nimport rego.v1\nrecreate contains {\"container\": \"app\", \"reason\": \"listed\"} if table[0] == 2\ntable := [", name)
	for b.Len() < size-3 {
		b.WriteString("1,")
	}
	b.WriteString("1]\n")
	return Rule{Name: name, Module: b.String()}
}

// retainedHeap is the live heap after a full collection.
func retainedHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// compiledCost is what the program of rules keeps in the heap while the
// engine holds it, measured without the per-policy bound.
func compiledCost(t *testing.T, rules ...Rule) uint64 {
	t.Helper()
	ctx := context.Background()
	before := retainedHeap()
	compiled := make([]*compiledRule, len(rules))
	for i, r := range rules {
		m, err := parseRule(r)
		if err != nil {
			t.Fatal(err)
		}
		cr, err := compileRule(ctx, r, m)
		if err != nil {
			t.Fatal(err)
		}
		compiled[i] = cr
	}
	c, traits, err := assemble(ctx, compiled)
	if err != nil {
		t.Fatal(err)
	}
	p := newProgram(Ref{Namespace: "shop", Name: "web"}, compiled, c, traits, &Options{})
	after := retainedHeap()
	runtime.KeepAlive(p)
	return after - min(before, after)
}

func mib(n uint64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// TestCompiledSizeIsBoundedPerPolicy: a rule with a 64 KiB literal table is
// within the CRD's length but keeps megabytes in the manager once compiled;
// the compile (the webhook's and the manager's) refuses it, naming the
// bound, while every built-in rule at once compiles.
func TestCompiledSizeIsBoundedPerPolicy(t *testing.T) {
	table := tableRule("table", maxRegoBytes)
	if len(table.Module) > maxRegoBytes {
		t.Fatalf("premise: the table rule is %d bytes, over the CRD's %d", len(table.Module), maxRegoBytes)
	}
	cost := compiledCost(t, table)
	t.Logf("a policy with one %d-byte literal table keeps %s in the heap once compiled (estimated %s)", len(table.Module), mib(cost), mib(estimate(t, table)))
	if cost < 4<<20 {
		t.Fatalf("premise: the table's program keeps %s, want megabytes", mib(cost))
	}

	err := Check(context.Background(), []Rule{table})
	var ce CompileErrors
	if !errors.As(err, &ce) || len(ce) != 1 || ce[0].Rule != "table" ||
		!strings.Contains(ce[0].Message, "over the bound of 8 MiB per policy") {
		t.Fatalf("Check of the table rule: got %v, want one error of rule \"table\" naming the bound of 8 MiB per policy", err)
	}
	t.Logf("refused: %v", err)

	// The largest table within the bound, and what it keeps.
	size := maxRegoBytes
	for ; size > 0; size -= 4096 {
		if Check(context.Background(), []Rule{tableRule("table", size)}) == nil {
			break
		}
	}
	t.Logf("the largest table accepted is about %d bytes and keeps %s once compiled (estimated %s)", size, mib(compiledCost(t, tableRule("table", size))), mib(estimate(t, tableRule("table", size))))

	var all []Rule
	for _, b := range rules.Builtins() {
		params, err := b.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, Rule{Name: b.Name, Builtin: b.Name, Module: b.Source, Parameters: params})
	}
	if err := Check(context.Background(), all); err != nil {
		t.Fatalf("every built-in rule in one policy: %v, want it to compile", err)
	}
	t.Logf("every built-in rule in one policy keeps %s once compiled (estimated %s)", mib(compiledCost(t, all...)), mib(estimate(t, all...)))
}

// TestCompiledSizeIsBoundedInTotal: past the engine's bound on the terms
// of the compilations in use, a policy's program is refused, naming the
// bound; once another policy is gone, it compiles at its next call.
func TestCompiledSizeIsBoundedInTotal(t *testing.T) {
	ctx := context.Background()
	a, b := tableRule("a", 12_000), tableRule("b", 12_000)
	per := estimate(t, a)
	e := NewEngine(Options{MaxCompiledBytes: per + per/2})
	if _, err := e.Program(ctx, Ref{Namespace: "one", Name: "p", UID: "1", Generation: 1}, []Rule{a}); err != nil {
		t.Fatalf("the first policy: %v", err)
	}
	second := Ref{Namespace: "two", Name: "p", UID: "2", Generation: 1}
	_, err := e.Program(ctx, second, []Rule{b})
	if !errors.Is(err, ErrCompiledTotal) || !strings.Contains(err.Error(), "over the manager's bound of "+bytesText(per+per/2)+" for compiled rules") {
		t.Fatalf("a second policy past the total: got %v, want ErrCompiledTotal naming the bound", err)
	}
	t.Logf("refused: %v", err)
	// The same policy shares the first's compilation, which costs nothing more.
	if _, err := e.Program(ctx, Ref{Namespace: "three", Name: "p", UID: "3", Generation: 1}, []Rule{a}); err != nil {
		t.Fatalf("a policy with the first's rules: %v, want it to share the compilation", err)
	}
	e.Forget("one", "p")
	e.Forget("three", "p")
	if _, err := e.Program(ctx, second, []Rule{b}); err != nil {
		t.Fatalf("the second policy once the first is gone: %v, want it compiled", err)
	}
}

// estimate is the rules' estimated compiled size.
func estimate(t *testing.T, rules ...Rule) uint64 {
	t.Helper()
	var n uint64
	for _, r := range rules {
		m, err := parseRule(r)
		if err != nil {
			t.Fatal(err)
		}
		n += compiledBytes(m)
	}
	return n
}
