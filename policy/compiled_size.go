package policy

import (
	"errors"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Bounds of what compiled rules keep in the manager's memory. A rule's
// source bound (64 KiB) says little of it: a literal table of small
// numbers is an AST term every two bytes, and each term stays in memory in
// the parsed module and in the compilations made of it, as does each
// rule's compiler. The size is estimated from the parsed modules before
// anything is compiled: compiledRuleBytes per rule and compiledTermBytes
// per term, as TestCompiledSizeIsBoundedPerPolicy measures them, erring
// high (a 64 KiB literal array of ones keeps 7.7 MiB, a table of objects
// up to 470 bytes a term, every built-in rule at once 1.5 MiB).
const (
	// MaxPolicyCompiledBytes bounds one policy's rules compiled; every
	// built-in rule at once is estimated at 1.8 MiB.
	MaxPolicyCompiledBytes = 8 << 20
	// DefaultMaxCompiledBytes bounds all the compilations the engine keeps
	// (policies with the same rules share one) when Options leaves it
	// unset.
	DefaultMaxCompiledBytes = 64 << 20

	compiledRuleBytes = 160 << 10
	compiledTermBytes = 512
)

// ErrCompiledTotal is returned by Engine.Program for a policy whose rules
// would take the engine's compilations past Options.MaxCompiledBytes.
var ErrCompiledTotal = errors.New("compiled rules over the manager's bound")

// parseRule parses a rule's module as Compile does.
func parseRule(r Rule) (*ast.Module, error) {
	return ast.ParseModuleWithOpts(r.Name+".rego", r.Module, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
}

// compiledBytes estimates what a parsed module keeps once compiled.
func compiledBytes(m *ast.Module) uint64 {
	terms := uint64(0)
	ast.WalkTerms(m, func(*ast.Term) bool { terms++; return false })
	return compiledRuleBytes + terms*compiledTermBytes
}

// policySizeError refuses rules over MaxPolicyCompiledBytes, at the rule
// that weighs most.
func policySizeError(rules []Rule, sizes []uint64, total uint64) *CompileError {
	largest := 0
	for i, n := range sizes {
		if n > sizes[largest] {
			largest = i
		}
	}
	return &CompileError{Rule: rules[largest].Name, Index: largest, Message: fmt.Sprintf(
		"the policy's rules would keep about %s in the manager's memory once compiled, %s of it for this rule, over the bound of %s per policy: make its literal tables smaller or split the policy",
		bytesText(total), bytesText(sizes[largest]), bytesText(MaxPolicyCompiledBytes))}
}

// compiledTotalError is a policy's rules refused for the engine's bound
// on what its compilations keep.
type compiledTotalError struct {
	size, kept, bound uint64
}

func (e *compiledTotalError) Error() string {
	return fmt.Sprintf("the policy's rules would keep about %s in the manager's memory once compiled, beside %s of other policies' rules: over the manager's bound of %s for compiled rules; "+
		"they are compiled at a later pass, once other policies' rules are gone", bytesText(e.size), bytesText(e.kept), bytesText(e.bound))
}

func (e *compiledTotalError) Is(target error) bool { return target == ErrCompiledTotal }

// reserve counts a compilation's size against the engine's bound, unless
// it was released meanwhile (nothing to count) or it would pass the bound
// (its error). e.mu is held.
func (e *Engine) reserve(key string, c *compilation, size uint64) error {
	if e.compiled[key] != c {
		return nil
	}
	if e.kept+size > e.opts.MaxCompiledBytes {
		return &compiledTotalError{size: size, kept: e.kept, bound: e.opts.MaxCompiledBytes}
	}
	e.kept += size
	c.size = size
	return nil
}
