package twins

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/rejuv-dev/rejuv/policy"
)

// arith applies the evaluator's own arithmetic built-in (minus, mul, div)
// to x and y, so that a twin's times and cutoffs are the module's to the
// last digit (OPA computes beyond whole numbers with 64-bit mantissas, and
// compares numbers exactly).
func arith(builtin string, x, y ast.Number) ast.Number {
	var out ast.Number
	err := topdown.GetBuiltin(builtin)(topdown.BuiltinContext{}, []*ast.Term{ast.NewTerm(x), ast.NewTerm(y)}, func(t *ast.Term) error {
		n, ok := t.Value.(ast.Number)
		if !ok {
			return fmt.Errorf("%s gave %v", builtin, t)
		}
		out = n
		return nil
	})
	if err != nil {
		// Numbers a rule's module divides by are constants other than 0.
		panic(fmt.Sprintf("twins: %s(%s, %s): %v", builtin, x, y, err))
	}
	return out
}

// integer is n as a Rego number.
func integer(n int64) ast.Number { return ast.Number(strconv.FormatInt(n, 10)) }

// numberParam is a resolved parameter as the engine puts it in the
// module.
func numberParam(params map[string]any, name string) ast.Number {
	v, err := policy.ToValue(params[name])
	n, ok := v.(ast.Number)
	if err != nil || !ok {
		panic(fmt.Sprintf("twins: parameter %s is %v, not a number", name, params[name]))
	}
	return n
}

var (
	nanosPerSecond = ast.Number("1000000000")
	// secondDivisor is the modules' 1e9, which they divide nanoseconds by.
	secondDivisor = ast.Number("1e9")
)

// cutoff is a time rule's now_ns - (PARAMETER * 1000000000) at an
// evaluation time, kept for the latest time (a pass evaluates all its pods
// at one time). Twins are shared by the policies with the same rules, so
// it is safe for concurrent use.
type cutoff struct {
	// span is the parameter times 1000000000, as the engine folds it.
	span   ast.Number
	latest atomic.Pointer[cutoffAt]
}

type cutoffAt struct {
	now    int64
	cutoff ast.Number
}

func newCutoff(seconds ast.Number) *cutoff {
	return &cutoff{span: arith("mul", seconds, nanosPerSecond)}
}

// at is the cutoff at now.
func (c *cutoff) at(now time.Time) ast.Number {
	ns := now.UnixNano()
	if l := c.latest.Load(); l != nil && l.now == ns {
		return l.cutoff
	}
	l := &cutoffAt{now: ns, cutoff: arith("minus", integer(ns), c.span)}
	c.latest.Store(l)
	return l.cutoff
}

// atOrBefore reports whether the time ns (Unix nanoseconds) is at or
// before the cutoff.
func atOrBefore(ns int64, cutoff ast.Number) bool {
	return ast.NumberCompare(integer(ns), cutoff) <= 0
}

// since is the modules' rejuv.format_duration((now_ns - ns) / 1e9).
func since(now time.Time, ns int64) string {
	return policy.FormatDurationNumber(arith("div", arith("minus", integer(now.UnixNano()), integer(ns)), secondDivisor))
}
