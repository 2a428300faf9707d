package rules

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// PackagePrefix is the Rego package under which every built-in rule lives:
// rule memory-leak is package rejuv.rules.memory_leak.
const PackagePrefix = "rejuv.rules."

// Rule is one built-in rule: a Rego module (which calls no other module, only
// built-ins, the policy engine's rejuv.format_* among them) and what its
// METADATA annotation says about it.
type Rule struct {
	// Name is how a policy names the rule (builtin: memory-leak).
	Name string
	// Package is the module's package without the data. prefix,
	// rejuv.rules.memory_leak; the rule's sets are data.<Package>.recreate and
	// data.<Package>.no_data.
	Package string
	// Title is the annotation's title; it equals Name.
	Title string
	// Description is a paragraph for users.
	Description string
	// Parameters are sorted by name.
	Parameters []Parameter
	// Module is the file name of the module, memory-leak.rego.
	Module string
	// Source is the module's Rego source.
	Source string
	// ReadsMemory is set when the rule reads the memory signal, which the
	// manager then samples for the pods of the policies that use it.
	ReadsMemory bool
}

// Builtins returns the built-in rules sorted by name. The library is embedded,
// so a malformed rule is a programming error: it panics (and the package's
// tests catch it first).
func Builtins() []Rule {
	rules := mustCatalog()
	out := make([]Rule, len(rules))
	for i, r := range rules {
		r.Parameters = slices.Clone(r.Parameters)
		out[i] = r
	}
	return out
}

// Lookup returns the built-in rule of that name.
func Lookup(name string) (Rule, bool) {
	rules := mustCatalog()
	i, ok := slices.BinarySearchFunc(rules, name, func(r Rule, name string) int { return cmp.Compare(r.Name, name) })
	if !ok {
		return Rule{}, false
	}
	r := rules[i]
	r.Parameters = slices.Clone(r.Parameters)
	return r, true
}

// catalog parses the embedded rules once.
var catalog = sync.OnceValues(func() ([]Rule, error) { return load(files) })

func mustCatalog() []Rule {
	rules, err := catalog()
	if err != nil {
		panic(fmt.Sprintf("rules: the built-in rule library is malformed: %v", err))
	}
	return rules
}

// load parses every rule module of fsys (*.rego but not *_test.rego).
func load(fsys fs.FS) ([]Rule, error) {
	names, err := fs.Glob(fsys, "*.rego")
	if err != nil {
		return nil, err
	}
	var rules []Rule
	for _, file := range names {
		if strings.HasSuffix(file, "_test.rego") {
			continue
		}
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		r, err := parseRule(file, string(src))
		if err != nil {
			return nil, fmt.Errorf("rule %s: %w", file, err)
		}
		rules = append(rules, r)
	}
	slices.SortFunc(rules, func(a, b Rule) int { return cmp.Compare(a.Name, b.Name) })
	return rules, nil
}

// parseRule reads one rule module and checks it keeps the contract: package
// named after the file, a package annotation whose title is the name, a
// description, documented parameters, and the recreate and no_data sets.
func parseRule(file, src string) (Rule, error) {
	mod, err := ast.ParseModuleWithOpts(file, src, ast.ParserOptions{ProcessAnnotation: true, RegoVersion: ast.RegoV1})
	if err != nil {
		return Rule{}, err
	}
	r := Rule{
		Name:        strings.TrimSuffix(file, ".rego"),
		Package:     strings.TrimPrefix(mod.Package.Path.String(), "data."),
		Module:      file,
		Source:      src,
		ReadsMemory: readsMemory(mod),
	}
	if want := PackagePrefix + strings.ReplaceAll(r.Name, "-", "_"); r.Package != want {
		return Rule{}, fmt.Errorf("package is %s, want %s", r.Package, want)
	}
	var meta *ast.Annotations
	for _, a := range mod.Annotations {
		if a.Scope == "package" {
			meta = a
		}
	}
	if meta == nil {
		return Rule{}, errors.New("no METADATA annotation on the package")
	}
	r.Title, r.Description = meta.Title, strings.TrimSpace(meta.Description)
	if r.Title != r.Name {
		return Rule{}, fmt.Errorf("title is %q, want the rule name %q", r.Title, r.Name)
	}
	if r.Description == "" {
		return Rule{}, errors.New("no description")
	}
	if r.Parameters, err = parseParameters(meta.Custom["parameters"]); err != nil {
		return Rule{}, err
	}
	for _, set := range []string{"recreate", "no_data"} {
		if !defines(mod, set) {
			return Rule{}, fmt.Errorf("does not define %s", set)
		}
	}
	return r, nil
}

// defines reports whether the module has a rule named name.
func defines(mod *ast.Module, name string) bool {
	for _, rule := range mod.Rules {
		if ref := rule.Head.Ref(); len(ref) > 0 && ref[0].Value.Compare(ast.Var(name)) == 0 {
			return true
		}
	}
	return false
}
