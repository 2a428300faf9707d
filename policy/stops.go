package policy

import (
	"errors"
	"sync"
)

// ErrBound is wrapped by an EvalError when a built-in's operands or result
// were over the sandbox's bound.
var ErrBound = errors.New("over the sandbox's bound")

// ErrOverrun is wrapped by an EvalError when one step of the evaluation (a
// built-in, which OPA does not interrupt) ran on past the deadline or the
// memory bound.
var ErrOverrun = errors.New("one step of the evaluation ran past its bounds")

// overrunError is an evaluation that ran past its bounds in one step: it
// wraps ErrOverrun.
type overrunError struct {
	overrunWhy
}

func (e *overrunError) Error() string { return ErrOverrun.Error() + ": " + e.why }
func (e *overrunError) Unwrap() error { return ErrOverrun }

// forgetOverrun takes back the overrun the guard recorded for the program
// in its journal, when it was not the program's own.
func (p *Program) forgetOverrun() {
	j := p.opts.Journal
	if j == nil {
		return
	}
	if err := j.Forget(p.ref.UID); err != nil {
		p.opts.Log.Error(err, "an overrun charged with the allocations of other evaluations could not be taken back from the journal: a restart would halt the policy", "policy", p.ref.String())
	}
}

// StopsToHalt is how many evaluations of a rule in a row the deadline or
// the memory bound must stop before its policy halts: one could be a
// loaded machine, three in a row is the rule. A built-in's bound, or a step
// that ran past the deadline, halts it at once.
const StopsToHalt = 3

// ruleStops counts the evaluations of one rule of a program the sandbox
// stopped in a row.
type ruleStops struct {
	mu     sync.Mutex
	inARow int
	last   error
}

// observe counts the outcome of one evaluation of the rule on its own.
func (s *ruleStops) observe(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case errors.Is(err, ErrBound), errors.Is(err, ErrOverrun):
		s.inARow, s.last = StopsToHalt, err
	case errors.Is(err, ErrDeadline), errors.Is(err, ErrMemory):
		s.inARow++
		s.last = err
	default:
		// Success, or an error of the rule's own (a wrong type, an
		// invalid result) that costs nothing to repeat.
		s.inARow = 0
	}
}

func (s *ruleStops) halting() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inARow >= StopsToHalt {
		return s.last
	}
	return nil
}

// Stop is a rule the sandbox stopped so that its policy should halt
// (several when they ran at once): with the error of its last evaluation
// (an *EvalError naming the rule, the pod and what stopped it).
type Stop struct {
	Rules []string
	Err   error
}

// Stopped returns the first rule of the program the sandbox stopped
// StopsToHalt times in a row, or at once for a built-in's bound or a step
// run past the deadline; nil when there is none.
func (p *Program) Stopped() *Stop {
	if s := p.overrun.Load(); s != nil {
		return s
	}
	for i, r := range p.rules {
		if err := p.stops[i].halting(); err != nil {
			return &Stop{Rules: []string{r.name}, Err: err}
		}
	}
	return nil
}
