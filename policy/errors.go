package policy

import (
	"errors"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
)

// CompileError is a rule that does not compile: its name, its position in
// the policy's rules, the line in its module (0 when none applies) and
// what is wrong.
type CompileError struct {
	Rule    string
	Index   int
	Line    int
	Message string
}

func (e *CompileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("rule %q: line %d: %s", e.Rule, e.Line, e.Message)
	}
	return fmt.Sprintf("rule %q: %s", e.Rule, e.Message)
}

// CompileErrors are all the compile errors of one policy.
type CompileErrors []*CompileError

func (e CompileErrors) Error() string {
	msgs := make([]string, len(e))
	for i, x := range e {
		msgs[i] = x.Error()
	}
	return strings.Join(msgs, "; ")
}

// compileErrors turns what OPA reports for one rule into CompileErrors.
func compileErrors(rule string, index int, err error) CompileErrors {
	var astErrs ast.Errors
	if !errors.As(err, &astErrs) || len(astErrs) == 0 {
		return CompileErrors{{Rule: rule, Index: index, Message: err.Error()}}
	}
	out := make(CompileErrors, 0, len(astErrs))
	for _, e := range astErrs {
		ce := &CompileError{Rule: rule, Index: index, Message: e.Code + ": " + e.Message}
		if e.Location != nil {
			ce.Line = e.Location.Row
		}
		out = append(out, ce)
	}
	return out
}

// EvalError is a rule whose evaluation for one pod failed: stopped by the
// deadline, a built-in error, or a result that is not a valid recreation.
type EvalError struct {
	Policy string
	Rule   string
	Pod    string
	Err    error
}

func (e *EvalError) Error() string {
	return fmt.Sprintf("policy %s rule %q on pod %s: %v", e.Policy, e.Rule, e.Pod, e.Err)
}

func (e *EvalError) Unwrap() error { return e.Err }

// ErrDeadline is wrapped by an EvalError when a rule ran past the
// evaluation deadline and was stopped.
var ErrDeadline = errors.New("evaluation stopped at the deadline")
