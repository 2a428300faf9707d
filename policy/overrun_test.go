package policy

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// stallBuiltin makes crypto.sha1 take d, ignoring cancellation, when it is
// given "stall": a built-in the sandbox cannot stop, which no audited
// built-in is known to be any more.
func stallBuiltin(t *testing.T, d time.Duration) {
	orig := topdown.GetBuiltin("crypto.sha1")
	topdown.RegisterBuiltinFunc("crypto.sha1", func(bctx topdown.BuiltinContext, ops []*ast.Term, iter func(*ast.Term) error) error {
		if s, ok := ops[0].Value.(ast.String); ok && s == "stall" {
			time.Sleep(d)
		}
		return orig(bctx, ops, iter)
	})
	t.Cleanup(func() { topdown.RegisterBuiltinFunc("crypto.sha1", orig) })
}

const stallingRule = "package stall\nimport rego.v1\nrecreate contains c.name if {\n\tsome c in input.containers\n\tcrypto.sha1(\"stall\") != \"\"\n}\n"

// TestAnOverrunIsRecordedAndHaltsThePolicy: an evaluation that runs past
// its deadline in a step the sandbox cannot stop is recorded in the
// journal while it runs (in case it kills the process), reported as an
// overrun when it ends, not run again one rule at a time, and halts the
// program's policy, naming its rules.
func TestAnOverrunIsRecordedAndHaltsThePolicy(t *testing.T) {
	stallBuiltin(t, 2*time.Second)
	j, err := OpenJournal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := program(t, Options{Deadline: 100 * time.Millisecond, Journal: j}, Rule{Name: "fine", Module: notReadyRule}, Rule{Name: "stall", Module: stallingRule})
	start := time.Now()
	res, err := p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	// Once, not again rule by rule.
	if took > 3500*time.Millisecond {
		t.Errorf("took %s: the stalling step ran more than once", took)
	}
	if !errors.Is(res[1].Err, ErrOverrun) || !strings.Contains(res[1].Err.Error(), "past its deadline (100ms)") {
		t.Errorf("got %v, want an overrun past the deadline", res[1].Err)
	}
	s := p.Stopped()
	if s == nil || strings.Join(s.Rules, ",") != "fine,stall" || !errors.Is(s.Err, ErrOverrun) {
		t.Fatalf("stopped: %+v, want both rules (they ran at once) stopped by the overrun", s)
	}
	left, err := j.Left()
	if err != nil || len(left) != 1 {
		t.Fatalf("journal: %v %v, want the overrun recorded", left, err)
	}
	o := left[0]
	if o.Namespace != "shop" || o.Name != "web" || strings.Join(o.Rules, ",") != "fine,stall" || o.Pod == "" || !strings.Contains(o.Why, "past its deadline") {
		t.Errorf("recorded %+v", o)
	}

	// Run alone from then on, the rule that stalls is the one named.
	q := program(t, Options{Deadline: 100 * time.Millisecond}, Rule{Name: "fine", Module: notReadyRule}, Rule{Name: "stall", Module: stallingRule})
	q.split.Store(true)
	if _, err := q.Evaluate(context.Background(), target(time.Now(), "app"), time.Now()); err != nil {
		t.Fatal(err)
	}
	if s := q.Stopped(); s == nil || strings.Join(s.Rules, ",") != "stall" {
		t.Errorf("stopped: %+v, want rule stall", s)
	}
}

// TestStuckNamesTheEvaluation: the liveness check fails while a step has
// run on past its deadline longer than it allows, and names the policy,
// the rule and the pod.
func TestStuckNamesTheEvaluation(t *testing.T) {
	stallBuiltin(t, 2500*time.Millisecond)
	p := program(t, Options{Deadline: 100 * time.Millisecond}, Rule{Name: "stall", Module: stallingRule})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now()); err != nil {
			t.Error(err)
		}
	}()
	if err := Stuck(500 * time.Millisecond); err != nil {
		t.Errorf("stuck at once: %v", err)
	}
	deadline := time.Now().Add(2 * time.Second)
	var err error
	for err == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		err = Stuck(500 * time.Millisecond)
	}
	if err == nil || !strings.Contains(err.Error(), `policy shop/web: rule "stall" for pod shop/`) {
		t.Errorf("got %v, want the stuck evaluation named", err)
	}
	<-done
	if err := Stuck(0); err != nil {
		t.Errorf("stuck after it ended: %v", err)
	}
}

// TestThreeStopsInARowHaltTheRule: the deadline stopping a rule once does
// not halt it (a loaded machine could), three evaluations in a row do; a
// built-in's bound halts it at once.
func TestThreeStopsInARowHaltTheRule(t *testing.T) {
	p := program(t, Options{Deadline: 50 * time.Millisecond}, Rule{Name: "fine", Module: notReadyRule}, Rule{Name: "endless", Module: policytest.Endless})
	for i := range 3 {
		if s := p.Stopped(); s != nil {
			t.Fatalf("after %d evaluations: stopped %+v, want not yet", i, s)
		}
		if _, err := p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	s := p.Stopped()
	if s == nil || strings.Join(s.Rules, ",") != "endless" || !errors.Is(s.Err, ErrDeadline) {
		t.Errorf("stopped %+v, want rule endless at its deadline", s)
	}

	bound := program(t, Options{}, Rule{Name: "fine", Module: notReadyRule}, Rule{Name: "big", Module: "package big\nimport rego.v1\nrecreate contains c.name if {\n\tsome c in input.containers\n\tcount(numbers.range(0, 200000)) > 0\n}\n"})
	if _, err := bound.Evaluate(context.Background(), target(time.Now(), "app"), time.Now()); err != nil {
		t.Fatal(err)
	}
	if s := bound.Stopped(); s == nil || strings.Join(s.Rules, ",") != "big" || !errors.Is(s.Err, ErrBound) {
		t.Errorf("stopped %+v, want rule big at a built-in's bound at once", s)
	}
}
