package policy

import (
	"maps"
	"math"

	"github.com/open-policy-agent/opa/v1/ast"
)

// maxTypeWork bounds the work the Rego type checker may do on one module,
// counted as the sum, over the values its expressions and rules build, of
// the square of each value's size once its references are expanded. The
// checker compares the types of two values part by part, from both sides:
// 28 lines `aN := [aN-1, aN-1]` make types of 2^28 parts, and the 26-line
// module `x := a12 in [b12]` took 16 s to compile, in one call that no
// deadline interrupts. The same chains make the values that evaluation
// compares whole, so bounding them here bounds both. 2^25 is about half a
// second of the checker's work; a literal table of a few thousand entries
// passes (a larger one belongs in the rule's parameters).
const maxTypeWork = 1 << 25

// maxTypeParts is the largest value one expression may build.
var maxTypeParts = int(math.Sqrt(maxTypeWork))

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
				if err := s.charge(t, env); err != nil {
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

// charge adds what the checker does with t, and refuses the module once
// that is over the bound.
func (s *typeSizes) charge(t *ast.Term, env locals) error {
	if t == nil {
		return nil
	}
	n := s.size(t, env)
	s.work = sat(s.work + sat(n*n))
	if n > maxTypeParts || s.work > maxTypeWork {
		return ast.Errors{ast.NewError(ast.CompileErr, t.Location,
			"this value has %d parts once its references are expanded, which with the module's other values is over the sandbox's bound for the type checker (%d parts squared): a table this large belongs in the rule's parameters", n, maxTypeWork)}
	}
	return nil
}

// check charges every expression of body, comprehensions and every
// included.
func (s *typeSizes) check(body ast.Body, env locals) error {
	for _, e := range body {
		env = s.bind(e, env)
		var err error
		switch x := e.Terms.(type) {
		case *ast.Term:
			err = s.charge(x, env)
		case []*ast.Term:
			operands := x[1:]
			if e.IsAssignment() {
				// The variable assigned is the value charged.
				operands = operands[1:]
			}
			for _, t := range operands {
				if err = s.charge(t, env); err != nil {
					break
				}
			}
		case *ast.Every:
			inner := env.with(varOf(x.Value), s.size(x.Domain, env))
			if x.Key != nil {
				inner = inner.with(varOf(x.Key), 1)
			}
			err = s.check(x.Body, inner)
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
				n := s.size(call[len(call)-1], env)
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
		// A part of a value is no larger than the value.
		if len(x) > len(s.pkg) && x.HasPrefix(s.pkg) {
			if v, ok := x[len(s.pkg)].Value.(ast.String); ok {
				return s.rule(ast.Var(v))
			}
		}
		return s.size(x[0], env)
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
