package rules

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// ParameterType is the kind of value a rule parameter takes; it decides how
// Resolve checks and converts the value a policy gives.
type ParameterType string

// The parameter types.
const (
	// TypeDuration is a Go duration string such as "10m" or "1h30m", resolved
	// to seconds (float64). A plain number is refused: its unit would be a
	// guess.
	TypeDuration ParameterType = "duration"
	// TypeQuantity is a Kubernetes quantity such as "50Mi" or a plain number
	// of bytes, resolved to bytes (int64, rounded up).
	TypeQuantity ParameterType = "quantity"
	// TypeNumber is any number, resolved to float64.
	TypeNumber ParameterType = "number"
	// TypeInteger is a whole number, resolved to int64.
	TypeInteger ParameterType = "integer"
	// TypeFraction is a number in (0, 1], resolved to float64.
	TypeFraction ParameterType = "fraction"
)

var parameterTypes = []ParameterType{TypeDuration, TypeQuantity, TypeNumber, TypeInteger, TypeFraction}

// Parameter documents one parameter of a rule, as its METADATA annotation
// declares it under custom.parameters.
type Parameter struct {
	// Name is the key in the policy's parameters and in input.parameters.
	Name string
	// Type decides the syntax and the resolved form.
	Type ParameterType
	// Default is used when the policy does not give the parameter: a string
	// for durations and quantities, float64 for numbers and fractions, int64
	// for integers.
	Default any
	// Description is a sentence for users.
	Description string
	// AllowZero lets a duration, quantity or integer be zero; otherwise it
	// must be greater than zero.
	AllowZero bool
}

// parseParameters reads custom.parameters of a rule's annotation: a map from
// name to {type, default, description, allowZero}.
func parseParameters(raw any) ([]Parameter, error) {
	if raw == nil {
		return nil, nil
	}
	specs, ok := raw.(map[string]any)
	if !ok {
		return nil, errors.New("custom.parameters is not a map of parameter names")
	}
	params := make([]Parameter, 0, len(specs))
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		p, err := parseParameter(name, specs[name])
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", name, err)
		}
		params = append(params, p)
	}
	return params, nil
}

func parseParameter(name string, raw any) (Parameter, error) {
	spec, ok := raw.(map[string]any)
	if !ok {
		return Parameter{}, errors.New("not a map of type, default and description")
	}
	for key := range spec {
		if !slices.Contains([]string{"type", "default", "description", "allowZero"}, key) {
			return Parameter{}, fmt.Errorf("unknown key %q (known: type, default, description, allowZero)", key)
		}
	}
	p := Parameter{Name: name}
	typ, _ := spec["type"].(string)
	p.Type = ParameterType(typ)
	if !slices.Contains(parameterTypes, p.Type) {
		return Parameter{}, fmt.Errorf("type %v is not one of %v", spec["type"], parameterTypes)
	}
	p.Description, _ = spec["description"].(string)
	if p.Description == "" {
		return Parameter{}, errors.New("no description")
	}
	if allow, ok := spec["allowZero"]; ok {
		if p.AllowZero, ok = allow.(bool); !ok {
			return Parameter{}, errors.New("allowZero is not a boolean")
		}
	}
	def, ok := spec["default"]
	if !ok {
		return Parameter{}, errors.New("no default")
	}
	var err error
	if p.Default, err = p.normalDefault(def); err != nil {
		return Parameter{}, err
	}
	if _, problem := p.resolve(p.Default); problem != "" {
		return Parameter{}, fmt.Errorf("default: %s", problem)
	}
	return p, nil
}

// normalDefault gives a default the Go type Parameter.Default documents.
func (p Parameter) normalDefault(def any) (any, error) {
	switch p.Type {
	case TypeDuration, TypeQuantity:
		if s, ok := def.(string); ok {
			return s, nil
		}
		return nil, fmt.Errorf("default %v of a %s is not a string", def, p.Type)
	case TypeInteger:
		if f, ok := number(def); ok && isInteger(f) {
			return int64(f), nil
		}
		return nil, fmt.Errorf("default %v is not an integer", def)
	default:
		if f, ok := number(def); ok {
			return f, nil
		}
		return nil, fmt.Errorf("default %v is not a number", def)
	}
}
