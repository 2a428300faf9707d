package policy

import (
	"maps"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
)

// maxTypeWork bounds the work the Rego type checker may do on one module.
// The checker compares the types of two values part by part, from both
// sides: 28 lines `aN := [aN-1, aN-1]` make types of 2^28 parts, and the
// 26-line module `x := a12 in [b12]` took 16 s to compile, in one call
// that no deadline interrupts. So the work counted is, for each call or
// unification, the product of the sizes of its two largest operands once
// their references are expanded, and for each rule's value or assigned
// value, its size. The same chains make the values that evaluation
// compares whole, so bounding them here bounds both. 2^25 is about half a
// second of the checker's work; a literal table of thousands of entries
// passes.
const maxTypeWork = 1 << 25

// refuseDeepValues refuses a module whose values, references expanded, are
// over maxTypeWork, before the type checker sees them.
func refuseDeepValues(module *ast.Module) error {
	s := &typeSizes{rules: map[ast.Var][]*ast.Rule{}, sizes: map[ast.Var]int{}, pkg: module.Package.Path}
	for _, r := range module.Rules {
		for ; r != nil; r = r.Else {
			if ref := r.Head.Ref(); len(ref) > 0 {
				if v, ok := ref[0].Value.(ast.Var); ok {
					s.rules[v] = append(s.rules[v], r)
				}
			}
		}
	}
	for _, r := range module.Rules {
		for ; r != nil; r = r.Else {
			env := s.body(r.Body, locals{})
			for _, t := range []*ast.Term{r.Head.Key, r.Head.Value} {
				if err := s.chargeValue(t, env); err != nil {
					return err
				}
			}
			if err := s.check(r.Body, locals{}); err != nil {
				return err
			}
		}
	}
	return nil
}

// locals are the sizes of a body's variables.
type locals map[ast.Var]int

func (l locals) with(v ast.Var, n int) locals {
	out := make(locals, len(l)+1)
	maps.Copy(out, l)
	out[v] = n
	return out
}

// typeSizes measures the values of one module.
type typeSizes struct {
	pkg   ast.Ref
	rules map[ast.Var][]*ast.Rule
	// sizes are the rules' values measured so far; -1 while one is being
	// measured (the compiler refuses recursion).
	sizes map[ast.Var]int
	work  int
}

// charge adds work for the value at t of n parts, and refuses the module
// once the work is over the bound.
func (s *typeSizes) charge(t *ast.Term, n, work int) error {
	s.work = sat(s.work + work)
	if s.work > maxTypeWork {
		var at *ast.Location
		if t != nil {
			at = t.Location
		}
		return ast.Errors{ast.NewError(ast.CompileErr, at,
			"this value has %d parts once its references are expanded: with what it is compared with and the module's other values, the type checker's work is over the sandbox's bound (%d): a table this large belongs in the rule's parameters", n, maxTypeWork)}
	}
	return nil
}

// chargeValue charges a value the checker types once: a rule's value, a
// value assigned.
func (s *typeSizes) chargeValue(t *ast.Term, env locals) error {
	if t == nil {
		return nil
	}
	n := s.size(t, env)
	if err := s.charge(t, n, n); err != nil {
		return err
	}
	return s.chargeCalls(t, env)
}

// chargeCall charges a call or unification of operands: the product of
// the two largest, then the calls within them.
func (s *typeSizes) chargeCall(operands []*ast.Term, env locals) error {
	if len(operands) == 0 {
		return nil
	}
	sizes := make([]int, len(operands))
	largest := 0
	for i, t := range operands {
		sizes[i] = s.size(t, env)
		if sizes[i] > sizes[largest] {
			largest = i
		}
	}
	work := sizes[largest]
	if len(sizes) > 1 {
		rest := slices.Delete(slices.Clone(sizes), largest, largest+1)
		work = sat(sizes[largest] * slices.Max(rest))
	}
	if err := s.charge(operands[largest], sizes[largest], work); err != nil {
		return err
	}
	for _, t := range operands {
		if err := s.chargeCalls(t, env); err != nil {
			return err
		}
	}
	return nil
}

// chargeCalls charges the calls within t (not within comprehensions, whose
// bodies are checked on their own).
func (s *typeSizes) chargeCalls(t *ast.Term, env locals) error {
	var err error
	switch x := t.Value.(type) {
	case ast.Call:
		err = s.chargeCall(x[1:], env)
	case *ast.Array:
		x.Until(func(e *ast.Term) bool { err = s.chargeCalls(e, env); return err != nil })
	case ast.Set:
		x.Until(func(e *ast.Term) bool { err = s.chargeCalls(e, env); return err != nil })
	case ast.Object:
		x.Until(func(k, v *ast.Term) bool {
			if err = s.chargeCalls(k, env); err == nil {
				err = s.chargeCalls(v, env)
			}
			return err != nil
		})
	}
	return err
}

// check charges every expression of body, comprehensions and every
// included.
func (s *typeSizes) check(body ast.Body, env locals) error {
	for _, e := range body {
		env = s.bind(e, env)
		var err error
		switch x := e.Terms.(type) {
		case *ast.Term:
			err = s.chargeValue(x, env)
		case []*ast.Term:
			if e.IsAssignment() {
				// The variable takes the value's type.
				err = s.chargeValue(x[2], env)
			} else {
				err = s.chargeCall(x[1:], env)
			}
		case *ast.Every:
			inner := env.with(varOf(x.Value), s.part(x.Domain, env))
			if x.Key != nil {
				inner = inner.with(varOf(x.Key), 1)
			}
			if err = s.chargeValue(x.Domain, env); err == nil {
				err = s.check(x.Body, inner)
			}
		}
		if err != nil {
			return err
		}
		if err := s.checkComprehensions(e, env); err != nil {
			return err
		}
	}
	return nil
}

// checkComprehensions checks the bodies of the comprehensions in e.
func (s *typeSizes) checkComprehensions(e *ast.Expr, env locals) error {
	var err error
	ast.WalkClosures(e, func(x any) bool {
		if err != nil {
			return true
		}
		switch c := x.(type) {
		case *ast.ArrayComprehension:
			err = s.check(c.Body, env)
		case *ast.SetComprehension:
			err = s.check(c.Body, env)
		case *ast.ObjectComprehension:
			err = s.check(c.Body, env)
		}
		return true
	})
	return err
}

// body returns the sizes of the variables body binds.
func (s *typeSizes) body(body ast.Body, env locals) locals {
	for _, e := range body {
		env = s.bind(e, env)
	}
	return env
}

// bind records the variable an expression binds: x := t, x = t, t = x,
// some x in t.
func (s *typeSizes) bind(e *ast.Expr, env locals) locals {
	if decl, ok := e.Terms.(*ast.SomeDecl); ok {
		for _, sym := range decl.Symbols {
			if call, ok := sym.Value.(ast.Call); ok && len(call) >= 3 {
				n := s.part(call[len(call)-1], env)
				for _, t := range call[1 : len(call)-1] {
					if v := varOf(t); v != "" {
						env = env.with(v, n)
					}
				}
			}
		}
		return env
	}
	if !e.IsAssignment() && !e.IsEquality() {
		return env
	}
	l, r := e.Operand(0), e.Operand(1)
	if v := varOf(l); v != "" {
		env = env.with(v, s.size(r, env))
	}
	if v := varOf(r); v != "" {
		env = env.with(v, s.size(l, env))
	}
	return env
}

func varOf(t *ast.Term) ast.Var {
	if t == nil {
		return ""
	}
	v, _ := t.Value.(ast.Var)
	return v
}

// size is how many parts t has once its references are expanded, up to
// a little past maxTypeWork.
func (s *typeSizes) size(t *ast.Term, env locals) int {
	if t == nil {
		return 0
	}
	switch x := t.Value.(type) {
	case ast.Var:
		if n, ok := env[x]; ok {
			return n
		}
		return s.rule(x)
	case ast.Ref:
		// A reference into a value is one of its parts, or smaller.
		if len(x) > len(s.pkg) && x.HasPrefix(s.pkg) {
			if v, ok := x[len(s.pkg)].Value.(ast.String); ok {
				if len(x) == len(s.pkg)+1 {
					return s.rule(ast.Var(v))
				}
				return s.rulePart(ast.Var(v))
			}
		}
		if len(x) == 1 {
			return s.size(x[0], env)
		}
		return s.part(x[0], env)
	case *ast.Array:
		n := 1
		x.Foreach(func(e *ast.Term) { n = sat(n + s.size(e, env)) })
		return n
	case ast.Set:
		n := 1
		x.Foreach(func(e *ast.Term) { n = sat(n + s.size(e, env)) })
		return n
	case ast.Object:
		n := 1
		x.Foreach(func(k, v *ast.Term) { n = sat(n + s.size(k, env) + s.size(v, env)) })
		return n
	case *ast.ArrayComprehension:
		return sat(1 + s.size(x.Term, s.body(x.Body, env)))
	case *ast.SetComprehension:
		return sat(1 + s.size(x.Term, s.body(x.Body, env)))
	case *ast.ObjectComprehension:
		inner := s.body(x.Body, env)
		return sat(1 + s.size(x.Key, inner) + s.size(x.Value, inner))
	case ast.Call:
		// A function of the module returns what its value is with its
		// arguments in place; a built-in returns a value of its declared
		// type.
		op, ok := x[0].Value.(ast.Ref)
		if !ok || len(op) != 1 {
			return 1
		}
		name, _ := op[0].Value.(ast.Var)
		n := 1
		for _, r := range s.rules[name] {
			fenv := locals{}
			for i, arg := range r.Head.Args {
				if v := varOf(arg); v != "" && i+1 < len(x) {
					fenv[v] = s.size(x[i+1], env)
				}
			}
			n = max(n, s.size(r.Head.Value, s.body(r.Body, fenv)))
		}
		return n
	}
	return 1
}

// part is the size of the largest part (element, key or value) of t's
// value: what a variable bound by some ... in t, or a reference into t,
// holds. Where t's parts are not known, t's own size.
func (s *typeSizes) part(t *ast.Term, env locals) int {
	n := 0
	switch x := t.Value.(type) {
	case *ast.Array:
		x.Foreach(func(e *ast.Term) { n = max(n, s.size(e, env)) })
	case ast.Set:
		x.Foreach(func(e *ast.Term) { n = max(n, s.size(e, env)) })
	case ast.Object:
		x.Foreach(func(k, v *ast.Term) { n = max(n, s.size(k, env), s.size(v, env)) })
	case *ast.ArrayComprehension:
		n = s.size(x.Term, s.body(x.Body, env))
	case *ast.SetComprehension:
		n = s.size(x.Term, s.body(x.Body, env))
	case *ast.ObjectComprehension:
		inner := s.body(x.Body, env)
		n = max(s.size(x.Key, inner), s.size(x.Value, inner))
	case ast.Var:
		if _, local := env[x]; !local {
			if _, ok := s.rules[x]; ok {
				return s.rulePart(x)
			}
		}
		return s.size(t, env)
	default:
		return s.size(t, env)
	}
	return max(n, 1)
}

// rulePart is the size of the largest part of the module's rule name's
// values: the elements of a multi-value rule, the parts of another's.
func (s *typeSizes) rulePart(name ast.Var) int {
	n := 1
	for _, r := range s.rules[name] {
		if len(r.Head.Args) > 0 {
			continue
		}
		env := s.body(r.Body, locals{})
		if r.Head.Value == nil {
			n = max(n, s.size(r.Head.Key, env))
			continue
		}
		n = max(n, s.part(r.Head.Value, env))
	}
	return n
}

// rule is the size of the largest value of the module's rule name (1 for
// a name that is not one).
func (s *typeSizes) rule(name ast.Var) int {
	if n, ok := s.sizes[name]; ok {
		return max(n, 1)
	}
	rules, ok := s.rules[name]
	if !ok {
		return 1
	}
	s.sizes[name] = -1
	n := 1
	for _, r := range rules {
		if len(r.Head.Args) > 0 {
			continue
		}
		env := s.body(r.Body, locals{})
		n = max(n, s.size(r.Head.Value, env), s.size(r.Head.Key, env))
	}
	s.sizes[name] = n
	return n
}

// sat saturates a size a little past the bound, where it stops mattering.
func sat(n int) int {
	return min(n, 2*maxTypeWork)
}
