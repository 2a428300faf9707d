package policy

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Bounds of the built-ins whose cost grows with a number they are given,
// or faster than their operands: one call does it all at once, where no
// deadline can interrupt it, so a rule could take down the manager with
// numbers.range(0, 1e10).
const (
	// MaxRangeNumbers is the most numbers numbers.range and
	// numbers.range_step return.
	MaxRangeNumbers = 100_000
	// MaxShiftBits is the largest shift bits.lsh takes.
	MaxShiftBits = 4096
	// MaxNumberChars is the longest number, in characters, arithmetic takes.
	MaxNumberChars = 1000
	// MaxPatternBytes is the longest regular expression the regex built-ins
	// take.
	MaxPatternBytes = 4096
	// maxPatternWork bounds a regular expression's length times the text's.
	maxPatternWork = 1 << 24
	// maxUnitsBytes is the longest text units.parse takes, and
	// maxExponentDigits the most digits of its exponent.
	maxUnitsBytes     = 64
	maxExponentDigits = 3
)

// withBound wraps the built-in f so that it checks its operands first, and
// its result before it is used; operands of the wrong type are left to
// the built-in's own errors.
func withBound(f topdown.BuiltinFunc, check func([]*ast.Term) error, result func(*ast.Term) error) topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, ops []*ast.Term, iter func(*ast.Term) error) error {
		if check != nil {
			if err := check(ops); err != nil {
				return halt(bctx.Location, err)
			}
		}
		if result != nil {
			iter = checked(bctx.Location, result, iter)
		}
		return f(bctx, ops, iter)
	}
}

// checked checks each result before iter uses it.
func checked(at *ast.Location, result func(*ast.Term) error, iter func(*ast.Term) error) func(*ast.Term) error {
	return func(t *ast.Term) error {
		if err := result(t); err != nil {
			return halt(at, err)
		}
		return iter(t)
	}
}

// halt stops the evaluation as an error of the rule; a plain built-in
// error would leave the expression undefined and the rule silently
// unmatched.
func halt(at *ast.Location, err error) error {
	return topdown.Halt{Err: (&topdown.Error{Code: topdown.BuiltinErr, Message: err.Error(), Location: at}).Wrap(ErrBound)}
}

func rangeBound(name string) func([]*ast.Term) error {
	return func(ops []*ast.Term) error {
		var step *ast.Term
		if name == "numbers.range_step" {
			step = ops[2]
		}
		a, okA := integer(ops[0])
		b, okB := integer(ops[1])
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
}

func lshBound(ops []*ast.Term) error {
	if err := numberBound("bits.lsh")(ops); err != nil {
		return err
	}
	shift, ok := integer(ops[1])
	if ok && shift.Cmp(big.NewInt(MaxShiftBits)) > 0 {
		return fmt.Errorf("bits.lsh: a shift of %s bits is over the sandbox's bound of %d", shift, MaxShiftBits)
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

// numberBound bounds the length of each number operand, and its
// exponent, which would make an exact number of that many digits.
func numberBound(name string) func([]*ast.Term) error {
	return func(ops []*ast.Term) error {
		for _, op := range ops {
			if n, ok := op.Value.(ast.Number); ok {
				if err := numberWithin(name, n); err != nil {
					return err
				}
			}
		}
		return nil
	}
}

func numberWithin(name string, n ast.Number) error {
	if len(n) > MaxNumberChars {
		return fmt.Errorf("%s: a number of %d characters is over the sandbox's bound of %d", name, len(n), MaxNumberChars)
	}
	return exponentWithin(name, string(n))
}

// exponentWithin bounds the exponent of a number written with one.
func exponentWithin(name, s string) error {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		exp := strings.TrimLeft(s[i+1:], "+-")
		digits := len(exp) - len(strings.TrimLeft(exp, "0123456789"))
		if digits > maxExponentDigits {
			return fmt.Errorf("%s: an exponent of %d digits is over the sandbox's bound of %d", name, digits, maxExponentDigits)
		}
	}
	return nil
}

// numbersBound bounds each number of sum's or product's collection, and,
// for product, whose result is as long as its factors together, their
// total length.
func numbersBound(name string) func([]*ast.Term) error {
	return func(ops []*ast.Term) error {
		total, longest := 0, 0
		var err error
		each := func(t *ast.Term) {
			if n, ok := t.Value.(ast.Number); ok {
				total += len(n)
				longest = max(longest, len(n))
				if err == nil {
					err = exponentWithin(name, string(n))
				}
			}
		}
		switch c := ops[0].Value.(type) {
		case *ast.Array:
			c.Foreach(each)
		case ast.Set:
			c.Foreach(each)
		}
		if err != nil {
			return err
		}
		if longest > MaxNumberChars {
			return fmt.Errorf("%s: a number of %d characters is over the sandbox's bound of %d", name, longest, MaxNumberChars)
		}
		if name == "product" && total > MaxNumberChars {
			return fmt.Errorf("%s: factors of %d characters together are over the sandbox's bound of %d", name, total, MaxNumberChars)
		}
		return nil
	}
}

// regexBound bounds the pattern, and its length times the text's.
func regexBound(name string) func([]*ast.Term) error {
	return func(ops []*ast.Term) error {
		pattern, _ := ops[0].Value.(ast.String)
		text := ast.String("")
		if len(ops) > 1 {
			text, _ = ops[1].Value.(ast.String)
		}
		return patternWithin(name, pattern, text)
	}
}

func patternWithin(name string, pattern, text ast.String) error {
	if len(pattern) > MaxPatternBytes {
		return fmt.Errorf("%s: a pattern of %d bytes is over the sandbox's bound of %d", name, len(pattern), MaxPatternBytes)
	}
	if len(pattern)*len(text) > maxPatternWork {
		return fmt.Errorf("%s: a pattern of %d bytes over a text of %d bytes is over the sandbox's bound of %d for their product", name, len(pattern), len(text), maxPatternWork)
	}
	return nil
}

// regexReplaceBound also bounds the result: each match may repeat the
// replacement, which may repeat the match ($0).
func regexReplaceBound(ops []*ast.Term) error {
	s, _ := ops[0].Value.(ast.String)
	pattern, _ := ops[1].Value.(ast.String)
	repl, _ := ops[2].Value.(ast.String)
	if err := patternWithin("regex.replace", pattern, s); err != nil {
		return err
	}
	if (len(s)+1)*len(repl) > MaxValueBytes {
		return fmt.Errorf("regex.replace: a replacement of %d bytes in a text of %d bytes is over the sandbox's bound of %d bytes for the result", len(repl), len(s), MaxValueBytes)
	}
	return nil
}

// unitsBound bounds the text of units.parse and its exponent, which
// would make an exact number of that many digits.
func unitsBound(name string) func([]*ast.Term) error {
	return func(ops []*ast.Term) error {
		s, _ := ops[0].Value.(ast.String)
		if len(s) > maxUnitsBytes {
			return fmt.Errorf("%s: a text of %d bytes is over the sandbox's bound of %d", name, len(s), maxUnitsBytes)
		}
		return exponentWithin(name, string(s))
	}
}
