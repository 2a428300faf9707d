package policyspec

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/rules"
	"github.com/rejuv-dev/rejuv/rules/twins"
)

// parseRules resolves each rule to the module and parameters the engine
// compiles: a built-in's source with its parameters checked and defaulted,
// or the inline module as written.
// The schema's bounds on rules (the CRD's maxItems and maxLength), checked
// again: an AdmissionReview sent to the webhook by someone other than the
// API server has not been through the schema, and must not make the
// webhook compile more.
const (
	MaxRules     = 16
	MaxRegoBytes = 65536
)

func parseRules(in []v1alpha1.Rule, fld *field.Path) ([]policy.Rule, field.ErrorList) {
	if len(in) > MaxRules {
		return nil, field.ErrorList{field.TooMany(fld, len(in), MaxRules)}
	}
	var errs field.ErrorList
	out := make([]policy.Rule, 0, len(in))
	seen := map[string]bool{}
	for i := range in {
		r := &in[i]
		rf := fld.Index(i)
		if seen[r.Name] {
			errs = append(errs, field.Duplicate(rf.Child("name"), r.Name))
		}
		seen[r.Name] = true
		switch {
		case r.Builtin != "" && r.Rego != "":
			errs = append(errs, field.Invalid(rf, r.Name, "exactly one of builtin and rego must be set"))
		case r.Builtin != "":
			pr, e := builtinRule(r, rf)
			errs = append(errs, e...)
			if pr != nil {
				out = append(out, *pr)
			}
		case len(r.Rego) > MaxRegoBytes:
			errs = append(errs, field.TooLong(rf.Child("rego"), "", MaxRegoBytes))
		case r.Rego != "":
			if len(r.Parameters) > 0 {
				errs = append(errs, field.Forbidden(rf.Child("parameters"), "parameters apply only to a builtin rule; an inline rule reads its own constants"))
			}
			out = append(out, policy.Rule{Name: r.Name, Module: r.Rego})
		default:
			errs = append(errs, field.Required(rf.Child("builtin"), "set builtin or rego"))
		}
	}
	return out, errs
}

func builtinRule(r *v1alpha1.Rule, fld *field.Path) (*policy.Rule, field.ErrorList) {
	b, ok := rules.Lookup(r.Builtin)
	if !ok {
		var names []string
		for _, x := range rules.Builtins() {
			names = append(names, x.Name)
		}
		return nil, field.ErrorList{field.NotSupported(fld.Child("builtin"), r.Builtin, names)}
	}
	given := make(map[string]any, len(r.Parameters))
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(r.Parameters)) {
		var v any
		if err := json.Unmarshal(r.Parameters[name].Raw, &v); err != nil {
			errs = append(errs, field.Invalid(fld.Child("parameters").Key(name), string(r.Parameters[name].Raw), fmt.Sprintf("not a JSON value: %v", err)))
			continue
		}
		given[name] = v
	}
	if len(errs) > 0 {
		return nil, errs
	}
	resolved, err := b.Resolve(given)
	if err != nil {
		var perrs rules.ParameterErrors
		if !errors.As(err, &perrs) {
			return nil, field.ErrorList{field.Invalid(fld.Child("parameters"), "", err.Error())}
		}
		for _, pe := range perrs {
			errs = append(errs, field.Invalid(fld.Child("parameters").Key(pe.Parameter), given[pe.Parameter], pe.Problem))
		}
		return nil, errs
	}
	return &policy.Rule{Name: r.Name, Builtin: b.Name, Module: b.Source, Parameters: resolved, Native: twins.Of(b, resolved)}, nil
}
