package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

var (
	keyContainer = ast.StringTerm("container")
	keyReason    = ast.StringTerm("reason")
	keyForce     = ast.StringTerm("force")
	keySignal    = ast.StringTerm("signal")
)

// readMatches validates what a rule's recreate yielded: a set of
// {"container": NAME, "reason": TEXT, "force": BOOL} objects (reason and
// force optional) or bare names, each naming a
// candidate container. Anything else is an error, never a recreation.
func readMatches(bound *ast.Term, known candidateNames) ([]Match, error) {
	items, err := collected(bound, varRecreate)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	seen := map[string]int{}
	var out []Match
	for _, item := range items {
		m, err := readMatch(item)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(known, m.Container) {
			return nil, fmt.Errorf("recreate names container %q, which is not a candidate (candidates: %s)", m.Container, strings.Join(slices.Sorted(slices.Values(known)), ", "))
		}
		if i, dup := seen[m.Container]; dup {
			if m.Reason != "" && !strings.Contains(out[i].Reason, m.Reason) {
				out[i].Reason += "; " + m.Reason
			}
			out[i].Force = out[i].Force || m.Force
			continue
		}
		seen[m.Container] = len(out)
		out = append(out, m)
	}
	return out, nil
}

func readMatch(item *ast.Term) (Match, error) {
	switch v := item.Value.(type) {
	case ast.String:
		if v == "" {
			return Match{}, fmt.Errorf("recreate yielded an empty container name")
		}
		return Match{Container: string(v)}, nil
	case ast.Object:
		name, ok := stringAt(v, keyContainer)
		if !ok || name == "" {
			return Match{}, fmt.Errorf("recreate yielded %v: an object needs a non-empty string \"container\"", v)
		}
		m := Match{Container: name}
		if r := v.Get(keyReason); r != nil {
			if m.Reason, ok = stringAt(v, keyReason); !ok {
				return Match{}, fmt.Errorf("recreate yielded %v: \"reason\" must be a string", v)
			}
		}
		if f := v.Get(keyForce); f != nil {
			b, ok := f.Value.(ast.Boolean)
			if !ok {
				return Match{}, fmt.Errorf("recreate yielded %v: \"force\" must be a boolean", v)
			}
			m.Force = bool(b)
		}
		for _, k := range v.Keys() {
			if !k.Equal(keyContainer) && !k.Equal(keyReason) && !k.Equal(keyForce) {
				return Match{}, fmt.Errorf("recreate yielded %v: unknown key %v (allowed: container, reason, force)", v, k)
			}
		}
		return m, nil
	default:
		return Match{}, fmt.Errorf("recreate yielded %v (%s): want a container name or {\"container\": NAME, \"reason\": TEXT}", item, ast.ValueName(item.Value))
	}
}

func stringAt(obj ast.Object, key *ast.Term) (string, bool) {
	t := obj.Get(key)
	if t == nil {
		return "", false
	}
	s, ok := t.Value.(ast.String)
	return string(s), ok
}

func readNoData(bound *ast.Term) ([]NoData, error) {
	items, err := collected(bound, varNoData)
	if err != nil || len(items) == 0 {
		return nil, err
	}
	out := make([]NoData, 0, len(items))
	for _, item := range items {
		obj, ok := item.Value.(ast.Object)
		var name, signal string
		var okName, okSignal bool
		if ok {
			name, okName = stringAt(obj, keyContainer)
			signal, okSignal = stringAt(obj, keySignal)
		}
		if !okName || !okSignal {
			return nil, fmt.Errorf("no_data yielded %v: want {\"container\": NAME, \"signal\": TEXT}", item)
		}
		out = append(out, NoData{Container: name, Signal: signal})
	}
	return out, nil
}

// collected returns the elements of a rule's set: bound as it is, or
// collected by a comprehension, an empty array when the rule was undefined
// and else one element, the rule's value.
func collected(t *ast.Term, rule string) ([]*ast.Term, error) {
	if t == nil {
		return nil, nil
	}
	if set, ok := t.Value.(ast.Set); ok {
		return set.Slice(), nil
	}
	outer, ok := t.Value.(*ast.Array)
	if !ok || outer.Len() > 1 {
		return nil, fmt.Errorf("%s has an unexpected shape %v", rule, t)
	}
	if outer.Len() == 0 {
		return nil, nil
	}
	set, ok := outer.Elem(0).Value.(ast.Set)
	if !ok {
		return nil, fmt.Errorf("%s must be a set, got %s", rule, ast.ValueName(outer.Elem(0).Value))
	}
	return set.Slice(), nil
}

// candidateNames are the names of a target's candidate containers.
type candidateNames []string

// unique reports whether no two candidates have the same name.
func (n candidateNames) unique() bool {
	for i, name := range n {
		if slices.Contains(n[:i], name) {
			return false
		}
	}
	return true
}

// itemContainer is the container a recreate or no_data element names: the
// element itself when it is a name, else its "container".
func itemContainer(item *ast.Term) (string, bool) {
	switch v := item.Value.(type) {
	case ast.String:
		return string(v), true
	case ast.Object:
		return stringAt(v, keyContainer)
	}
	return "", false
}
