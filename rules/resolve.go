package rules

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

// ParameterError is one problem with one parameter a policy gives a rule.
type ParameterError struct {
	// Parameter is the name as the policy gives it.
	Parameter string
	// Problem says what is wrong without naming the parameter, for a field
	// error: `"10 minutes" is not a duration (e.g. 10m, 1h30m)`.
	Problem string
	// Unknown is set when the rule has no parameter of that name.
	Unknown bool
	// Known lists the rule's parameters when Unknown is set.
	Known []string
}

// Error reads `parameter "notReadyFor": PROBLEM`, or
// `unknown parameter "minGrowth" (known: ...)`.
func (e ParameterError) Error() string {
	if e.Unknown {
		return fmt.Sprintf("unknown parameter %q (%s)", e.Parameter, knownText(e.Known))
	}
	return fmt.Sprintf("parameter %q: %s", e.Parameter, e.Problem)
}

// ParameterErrors are all the problems with a rule's parameters, sorted by
// parameter name.
type ParameterErrors []ParameterError

// Error joins the problems with "; ".
func (errs ParameterErrors) Error() string {
	texts := make([]string, len(errs))
	for i, e := range errs {
		texts[i] = e.Error()
	}
	return strings.Join(texts, "; ")
}

// Resolve checks the parameters a policy gives the rule (decoded JSON:
// strings, float64 or json.Number, bools) and returns the complete set the
// rule reads as input.parameters: every parameter, defaults filled in,
// durations in seconds (float64), quantities in bytes (int64), integers as
// int64, numbers and fractions as float64. The error, if any, is
// ParameterErrors naming every bad or unknown parameter.
func (r Rule) Resolve(given map[string]any) (map[string]any, error) {
	var errs ParameterErrors
	known := make([]string, len(r.Parameters))
	for i, p := range r.Parameters {
		known[i] = p.Name
	}
	for _, name := range slices.Sorted(maps.Keys(given)) {
		if !slices.Contains(known, name) {
			errs = append(errs, ParameterError{
				Parameter: name,
				Problem:   "unknown parameter (" + knownText(known) + ")",
				Unknown:   true,
				Known:     known,
			})
		}
	}
	resolved := make(map[string]any, len(r.Parameters))
	for _, p := range r.Parameters {
		v, ok := given[p.Name]
		if !ok {
			v = p.Default
		}
		value, problem := p.resolve(v)
		if problem != "" {
			errs = append(errs, ParameterError{Parameter: p.Name, Problem: problem})
			continue
		}
		resolved[p.Name] = value
	}
	if len(errs) > 0 {
		slices.SortStableFunc(errs, func(a, b ParameterError) int { return cmp.Compare(a.Parameter, b.Parameter) })
		return nil, errs
	}
	return resolved, nil
}

func knownText(known []string) string {
	if len(known) == 0 {
		return "the rule takes none"
	}
	return "known: " + strings.Join(known, ", ")
}

// resolve converts one given value to its resolved form, or says what is
// wrong with it.
func (p Parameter) resolve(v any) (any, string) {
	switch p.Type {
	case TypeDuration:
		s, ok := v.(string)
		if !ok {
			if _, isNumber := number(v); isNumber {
				return nil, fmt.Sprintf("%s is not a duration: give it with a unit, e.g. \"%ss\"", show(v), show(v))
			}
			return nil, fmt.Sprintf("%s is not a duration (e.g. 10m, 1h30m)", show(v))
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, fmt.Sprintf("%s is not a duration (e.g. 10m, 1h30m)", show(v))
		}
		return signed(p, d.Seconds(), v)
	case TypeQuantity:
		q, ok := quantity(v)
		if !ok {
			return nil, fmt.Sprintf("%s is not a quantity (e.g. 50Mi, 1Gi)", show(v))
		}
		return signed(p, q.Value(), v)
	case TypeNumber:
		f, ok := number(v)
		if !ok {
			return nil, fmt.Sprintf("%s is not a number", show(v))
		}
		return f, ""
	case TypeInteger:
		f, ok := number(v)
		if !ok || !isInteger(f) {
			return nil, fmt.Sprintf("%s is not an integer", show(v))
		}
		return signed(p, int64(f), v)
	case TypeFraction:
		f, ok := number(v)
		if !ok || f <= 0 || f > 1 {
			return nil, fmt.Sprintf("%s is not a fraction in (0, 1]", show(v))
		}
		return f, ""
	}
	return nil, fmt.Sprintf("has unknown type %q", p.Type)
}

// signed checks x against p's lower bound: greater than zero, or not
// negative with AllowZero.
func signed[T float64 | int64](p Parameter, x T, given any) (any, string) {
	switch {
	case x < 0 && p.AllowZero:
		return nil, fmt.Sprintf("%s must not be negative", show(given))
	case x < 0 || (x == 0 && !p.AllowZero):
		return nil, fmt.Sprintf("%s must be greater than zero", show(given))
	}
	return x, ""
}

// number accepts the numbers decoded JSON and YAML hold.
func number(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case float32:
		f = float64(n)
	case int:
		f = float64(n)
	case int32:
		f = float64(n)
	case int64:
		f = float64(n)
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

func isInteger(f float64) bool {
	return f == math.Trunc(f) && math.Abs(f) < 1<<63
}

// quantity accepts a Kubernetes quantity string or a plain number of bytes,
// as resource limits do.
func quantity(v any) (resource.Quantity, bool) {
	s, ok := v.(string)
	if !ok {
		f, isNumber := number(v)
		if !isNumber {
			return resource.Quantity{}, false
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	q, err := resource.ParseQuantity(s)
	return q, err == nil
}

// show renders a given value the way the policy spelled it in JSON.
func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
