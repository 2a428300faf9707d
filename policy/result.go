package policy

import (
	"fmt"
	"slices"
	"strings"
)

// readMatches validates what a rule's recreate yielded: a set of
// {"container": NAME, "reason": TEXT} objects or bare names, each naming a
// candidate container. Anything else is an error, never a recreation.
func readMatches(bound any, known map[string]bool) ([]Match, error) {
	set, err := collected(bound, varRecreate)
	if err != nil || len(set) == 0 {
		return nil, err
	}
	seen := map[string]int{}
	var out []Match
	for _, item := range set {
		m, err := readMatch(item)
		if err != nil {
			return nil, err
		}
		if !known[m.Container] {
			return nil, fmt.Errorf("recreate names container %q, which is not a candidate (candidates: %s)", m.Container, strings.Join(sortedKeys(known), ", "))
		}
		if i, dup := seen[m.Container]; dup {
			if m.Reason != "" && !strings.Contains(out[i].Reason, m.Reason) {
				out[i].Reason += "; " + m.Reason
			}
			continue
		}
		seen[m.Container] = len(out)
		out = append(out, m)
	}
	return out, nil
}

func readMatch(item any) (Match, error) {
	switch v := item.(type) {
	case string:
		if v == "" {
			return Match{}, fmt.Errorf("recreate yielded an empty container name")
		}
		return Match{Container: v}, nil
	case map[string]any:
		name, ok := v["container"].(string)
		if !ok || name == "" {
			return Match{}, fmt.Errorf("recreate yielded %v: an object needs a non-empty string \"container\"", v)
		}
		m := Match{Container: name}
		if r, present := v["reason"]; present {
			if m.Reason, ok = r.(string); !ok {
				return Match{}, fmt.Errorf("recreate yielded %v: \"reason\" must be a string", v)
			}
		}
		for k := range v {
			if k != "container" && k != "reason" {
				return Match{}, fmt.Errorf("recreate yielded %v: unknown key %q (allowed: container, reason)", v, k)
			}
		}
		return m, nil
	default:
		return Match{}, fmt.Errorf("recreate yielded %v (%T): want a container name or {\"container\": NAME, \"reason\": TEXT}", item, item)
	}
}

func readNoData(bound any) ([]NoData, error) {
	set, err := collected(bound, varNoData)
	if err != nil || len(set) == 0 {
		return nil, err
	}
	out := make([]NoData, 0, len(set))
	for _, item := range set {
		v, ok := item.(map[string]any)
		name, okName := v["container"].(string)
		signal, okSignal := v["signal"].(string)
		if !ok || !okName || !okSignal {
			return nil, fmt.Errorf("no_data yielded %v: want {\"container\": NAME, \"signal\": TEXT}", item)
		}
		out = append(out, NoData{Container: name, Signal: signal})
	}
	return out, nil
}

// collected unwraps the comprehension around a rule's value: an empty
// array when the rule was undefined, else one element, the rule's set.
func collected(bound any, rule string) ([]any, error) {
	if bound == nil {
		return nil, nil
	}
	outer, ok := bound.([]any)
	if !ok || len(outer) > 1 {
		return nil, fmt.Errorf("%s has an unexpected shape %T", rule, bound)
	}
	if len(outer) == 0 {
		return nil, nil
	}
	set, ok := outer[0].([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be a set, got %T", rule, outer[0])
	}
	return set, nil
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
