package rules

import (
	"crypto/sha256"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// ReadsMemory reports whether a Rego module reads the memory signal: some
// term of it names the field memory (c.memory, c["memory"] or a path given
// to object.get). The manager samples the working set only for policies
// with such a rule. A module that does not parse reads nothing.
func ReadsMemory(src string) bool {
	return Names(src, "memory")
}

// Names reports whether some term of a Rego module names field: a
// reference's part (input.signals.queue, c["queue"]) or a string (a path
// given to object.get). A module that does not parse names nothing.
//
// The answers are remembered by the module's digest and the field: the
// manager asks the same questions of the same modules at every policy pass
// (which rules read memory) and for every request it creates, and parsing
// a module costs tens of microseconds where a lookup costs one.
func Names(src, field string) bool {
	key := namesKey{sha256.Sum256([]byte(src)), field}
	answers.mu.Lock()
	found, known := answers.m[key]
	answers.mu.Unlock()
	if known {
		return found
	}
	found = parseNames(src, field)
	answers.mu.Lock()
	if len(answers.m) >= answersLimit {
		// Modules long gone (edited policies) are forgotten with the rest.
		answers.m = nil
	}
	if answers.m == nil {
		answers.m = map[namesKey]bool{}
	}
	answers.m[key] = found
	answers.mu.Unlock()
	return found
}

// answersLimit bounds the answers Names remembers: past it, it starts
// afresh.
const answersLimit = 4096

type namesKey struct {
	module [sha256.Size]byte
	field  string
}

var answers struct {
	mu sync.Mutex
	m  map[namesKey]bool
}

// parseNames is Names without the memory of its answers.
func parseNames(src, field string) bool {
	mod, err := ast.ParseModuleWithOpts("rule.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		if mod, err = ast.ParseModuleWithOpts("rule.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV0}); err != nil {
			return false
		}
	}
	return names(mod, field)
}

func readsMemory(mod *ast.Module) bool { return names(mod, "memory") }

// names looks in the module's rules only: its package path and imports
// (package queue, import rego.v1) name no field.
func names(mod *ast.Module, field string) bool {
	found := false
	want := ast.String(field)
	for _, r := range mod.Rules {
		ast.WalkTerms(r, func(t *ast.Term) bool {
			if s, ok := t.Value.(ast.String); ok && s == want {
				found = true
			}
			return found
		})
	}
	return found
}
