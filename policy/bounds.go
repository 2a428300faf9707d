package policy

import (
	"fmt"
	"math/big"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Bounds of the built-ins whose result grows with a number they are given:
// one call allocates it all at once, where no deadline can interrupt it,
// so a rule could take down the manager with numbers.range(0, 1e10).
const (
	// MaxRangeNumbers is the most numbers numbers.range and
	// numbers.range_step return.
	MaxRangeNumbers = 100_000
	// MaxShiftBits is the largest shift bits.lsh takes.
	MaxShiftBits = 4096
)

// The bounds wrap OPA's own built-ins, which are process-wide: every
// evaluation in this process runs with them.
func init() {
	bound("numbers.range", func(ops []*ast.Term) error { return rangeWithin("numbers.range", ops[0], ops[1], nil) })
	bound("numbers.range_step", func(ops []*ast.Term) error { return rangeWithin("numbers.range_step", ops[0], ops[1], ops[2]) })
	bound("bits.lsh", func(ops []*ast.Term) error {
		shift, ok := integer(ops[1])
		if ok && shift.Cmp(big.NewInt(MaxShiftBits)) > 0 {
			return fmt.Errorf("bits.lsh: a shift of %s bits is over the sandbox's bound of %d", shift, MaxShiftBits)
		}
		return nil
	})
	bound("concat", concatBound)
	bound("sprintf", sprintfBound)
	for _, name := range []string{
		"json.marshal", "json.marshal_with_options", "yaml.marshal", "urlquery.encode_object",
		"internal.print", "sort", "equal", "neq", "strings.render_template",
		"io.jwt.encode_sign", "io.jwt.encode_sign_raw",
	} {
		bound(name, sizeBound(name))
	}
}

// bound makes the built-in name check its operands first; operands of
// the wrong type are left to OPA's own errors.
func bound(name string, check func([]*ast.Term) error) {
	orig := topdown.GetBuiltin(name)
	if orig == nil {
		panic("policy: no built-in " + name + " to bound")
	}
	topdown.RegisterBuiltinFunc(name, func(bctx topdown.BuiltinContext, ops []*ast.Term, iter func(*ast.Term) error) error {
		if err := check(ops); err != nil {
			// A halt stops the evaluation as an error of the rule; a
			// plain built-in error would leave the expression undefined
			// and the rule silently unmatched.
			return topdown.Halt{Err: &topdown.Error{Code: topdown.BuiltinErr, Message: err.Error(), Location: bctx.Location}}
		}
		return orig(bctx, ops, iter)
	})
}

func rangeWithin(name string, from, to, step *ast.Term) error {
	a, okA := integer(from)
	b, okB := integer(to)
	if !okA || !okB {
		return nil
	}
	n := new(big.Int).Sub(b, a)
	n.Abs(n)
	if step != nil {
		s, ok := integer(step)
		if !ok || s.Sign() <= 0 {
			return nil
		}
		n.Quo(n, s)
	}
	n.Add(n, big.NewInt(1))
	if n.Cmp(big.NewInt(MaxRangeNumbers)) > 0 {
		return fmt.Errorf("%s: %s numbers is over the sandbox's bound of %d", name, n, MaxRangeNumbers)
	}
	return nil
}

// integer reads an integer operand.
func integer(t *ast.Term) (*big.Int, bool) {
	n, ok := t.Value.(ast.Number)
	if !ok {
		return nil, false
	}
	i, ok := new(big.Int).SetString(string(n), 10)
	return i, ok
}
