package policy

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/types"
)

// The formatting built-ins every rule may call to write its reasons:
// numbers as people read them, without the arithmetic on arbitrary
// precision numbers that the same formatting written in Rego costs (it was
// most of the evaluation of a rule that matched).
const (
	// FormatNumber renders a number with at most two decimals: 50, 117.7,
	// 0.93.
	FormatNumber = "rejuv.format_number"
	// FormatBytes renders a byte count as a binary Kubernetes quantity:
	// 52428800 is "50Mi", 123456789 is "117.74Mi".
	FormatBytes = "rejuv.format_bytes"
	// FormatDuration renders seconds like a Go duration without zero
	// units: 750 is "12m30s", 3600 is "1h", 0 is "0s".
	FormatDuration = "rejuv.format_duration"
)

// ownBuiltin is one of Rejuv's own built-ins: its declaration and what it
// computes from its one operand.
type ownBuiltin struct {
	decl *ast.Builtin
	impl func(*ast.Term) (*ast.Term, error)
}

// ownBuiltins are Rejuv's formatting built-ins.
var ownBuiltins = sync.OnceValue(func() []ownBuiltin {
	format := func(name, description string, exact func(*big.Rat) string, fast func(float64) (string, bool)) ownBuiltin {
		return ownBuiltin{
			decl: &ast.Builtin{
				Name:        name,
				Description: description,
				Decl:        types.NewFunction(types.Args(types.Named("x", types.N)), types.Named("text", types.S)),
			},
			impl: func(x *ast.Term) (*ast.Term, error) {
				n, ok := x.Value.(ast.Number)
				if !ok {
					return nil, fmt.Errorf("%s: operand must be a number, not %s", name, ast.ValueName(x.Value))
				}
				text, ok := formatText(string(n), fast, exact)
				if !ok {
					return nil, fmt.Errorf("%s: %s is not a finite number", name, n)
				}
				return ast.StringTerm(text), nil
			},
		}
	}
	return []ownBuiltin{
		format(FormatNumber, "Renders a number with at most two decimals: 50, 117.7, 0.93.", formatNumber, fastNumber),
		format(FormatBytes, `Renders a byte count as a binary Kubernetes quantity: 52428800 is "50Mi", 123456789 is "117.74Mi".`, formatBytes, fastBytes),
		format(FormatDuration, `Renders seconds like a Go duration without zero units: 750 is "12m30s", 3600 is "1h", 0 is "0s".`, formatDuration, fastDuration),
	}
})

// formatText formats the number written n: fast, or exactly when it is
// near a half where it is rounded (numbers are mostly far from one: those
// need no big numbers); false when n is not a finite number.
func formatText(n string, fast func(float64) (string, bool), exact func(*big.Rat) string) (string, bool) {
	if f, err := strconv.ParseFloat(n, 64); err == nil {
		if text, ok := fast(f); ok {
			return text, true
		}
	}
	r, ok := new(big.Rat).SetString(n)
	if !ok {
		return "", false
	}
	return exact(r), true
}

// function is the built-in as the evaluator calls it: an error is the
// built-in's, which leaves the expression undefined unless built-in errors
// are strict, as OPA's own.
func (b ownBuiltin) function() topdown.BuiltinFunc {
	return func(bctx topdown.BuiltinContext, ops []*ast.Term, iter func(*ast.Term) error) error {
		out, err := b.impl(ops[0])
		if err != nil {
			return (&topdown.Error{Code: topdown.BuiltinErr, Message: b.decl.Name + ": " + err.Error(), Location: bctx.Location}).Wrap(err)
		}
		return iter(out)
	}
}

// OwnBuiltin is one of Rejuv's own built-ins, for evaluating Rejuv's rules
// outside the engine with OPA's own packages (opa test's runner, a prepared
// query to compare with): its declaration, and the option that gives it to
// a query of OPA's rego package.
type OwnBuiltin struct {
	Decl *ast.Builtin
	Rego func(*rego.Rego)
}

// WithOwnBuiltins adds Rejuv's own built-ins to options of a query of
// OPA's rego package, which knows nothing of them.
func WithOwnBuiltins(opts ...func(*rego.Rego)) []func(*rego.Rego) {
	for _, b := range OwnBuiltins() {
		opts = append(opts, b.Rego)
	}
	return opts
}

// OwnBuiltins are Rejuv's own built-ins (the formatting ones, see
// FormatNumber), which the engine gives its own queries alone.
func OwnBuiltins() []OwnBuiltin {
	var out []OwnBuiltin
	for _, b := range ownBuiltins() {
		out = append(out, OwnBuiltin{Decl: b.decl, Rego: rego.Function1(&rego.Function{Name: b.decl.Name, Description: b.decl.Description, Decl: b.decl.Decl},
			func(_ rego.BuiltinContext, x *ast.Term) (*ast.Term, error) { return b.impl(x) })})
	}
	return out
}

// roundFloat rounds x*scale half away from zero, as Rego's round does;
// false when x*scale is too large, or too close to a half, for float64's
// rounding errors (well under a millionth below a billion) to leave the
// result certain: the caller rounds exactly then.
func roundFloat(x, scale float64) (int64, bool) {
	y := math.Abs(x * scale)
	if math.IsNaN(y) || y >= 1e9 {
		return 0, false
	}
	if d := y - math.Floor(y) - 0.5; -1e-6 < d && d < 1e-6 {
		return 0, false
	}
	r := int64(math.Round(y))
	if x < 0 {
		r = -r
	}
	return r, true
}

func fastNumber(x float64) (string, bool) {
	h, ok := roundFloat(x, 100)
	if !ok {
		return "", false
	}
	return signedHundredths(h), true
}

func fastBytes(x float64) (string, bool) {
	abs := math.Abs(x)
	for _, u := range binaryUnits {
		size := float64(u.size)
		if math.Abs(abs-size) < 1e-6*size {
			return "", false
		}
		if abs >= size {
			// 100/size is exact: size is a power of two.
			h, ok := roundFloat(x, 100/size)
			if !ok {
				return "", false
			}
			return signedHundredths(h) + u.suffix, true
		}
	}
	return fastNumber(x)
}

func fastDuration(x float64) (string, bool) {
	t, ok := roundFloat(x, 1)
	if !ok {
		return "", false
	}
	return durationText(t), true
}

// signedHundredths writes h hundredths with at most two decimals.
func signedHundredths(h int64) string {
	sign := ""
	if h < 0 {
		sign, h = "-", -h
	}
	return sign + strconv.FormatInt(h/100, 10) + centsText(h%100)
}

// centsText writes the decimals of c hundredths: none, one or two.
func centsText(c int64) string {
	switch {
	case c == 0:
		return ""
	case c%10 == 0:
		return "." + strconv.FormatInt(c/10, 10)
	default:
		return fmt.Sprintf(".%02d", c)
	}
}

// durationText writes whole seconds like a Go duration without zero
// units.
func durationText(seconds int64) string {
	if seconds < 1 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		n    int64
		unit string
	}{{seconds / 3600, "h"}, {seconds % 3600 / 60, "m"}, {seconds % 60, "s"}} {
		if u.n > 0 {
			b.WriteString(strconv.FormatInt(u.n, 10) + u.unit)
		}
	}
	return b.String()
}

// roundHalfAway rounds r to the nearest integer, halves away from zero,
// as Rego's round does.
func roundHalfAway(r *big.Rat) *big.Int {
	twice := new(big.Rat).Mul(r, big.NewRat(2, 1))
	if r.Sign() < 0 {
		twice.Sub(twice, big.NewRat(1, 1))
	} else {
		twice.Add(twice, big.NewRat(1, 1))
	}
	// (2r ± 1) / 2, truncated towards zero.
	return new(big.Int).Quo(twice.Num(), new(big.Int).Mul(twice.Denom(), big.NewInt(2)))
}

func formatNumber(r *big.Rat) string {
	h := roundHalfAway(new(big.Rat).Mul(r, big.NewRat(100, 1)))
	sign := ""
	if h.Sign() < 0 {
		sign = "-"
		h.Neg(h)
	}
	whole, cents := new(big.Int).QuoRem(h, big.NewInt(100), new(big.Int))
	return sign + whole.String() + centsText(cents.Int64())
}

var binaryUnits = []struct {
	suffix string
	size   int64
}{{"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}}

func formatBytes(r *big.Rat) string {
	abs := new(big.Rat).Abs(r)
	for _, u := range binaryUnits {
		size := big.NewRat(u.size, 1)
		if abs.Cmp(size) >= 0 {
			return formatNumber(new(big.Rat).Quo(r, size)) + u.suffix
		}
	}
	return formatNumber(r)
}

func formatDuration(r *big.Rat) string {
	t := roundHalfAway(r)
	if t.Sign() < 1 {
		return "0s"
	}
	if t.IsInt64() {
		return durationText(t.Int64())
	}
	// More hours than an int64 of seconds holds.
	hours, rest := new(big.Int).QuoRem(t, big.NewInt(3600), new(big.Int))
	return hours.String() + "h" + strings.TrimPrefix(durationText(rest.Int64()), "0s")
}
