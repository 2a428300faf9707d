package policy

import (
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// The sandbox's built-ins are scoped to the engine's queries, as
// Gatekeeper scopes its built-in to its driver: OPA's process-wide tables
// of built-ins are left as they are, so that no importer of this package
// (the kubectl plugin, a test that uses OPA's rego package) evaluates
// differently for it.
//
// OPA's evaluator calls a built-in OPA declares from OPA's own table,
// whatever a query is given. So each built-in the audit bounds gets a name
// of its own (wrapperName), under which the engine's queries are given it
// wrapped in its bound, and each call of it in a compiled module is renamed
// to that name (scopeBuiltins, the compiler's last stage). Rejuv's own
// built-ins keep their names, which OPA does not declare.

// wrapperName is the name of the bounded wrapper of OPA's built-in name:
// one word, which the evaluator reads without allocating at each call (a
// dotted name is built again every time).
func wrapperName(name string) string {
	return "rejuv_bounded_" + strings.ReplaceAll(name, ".", "_")
}

// sandboxBuiltins are the built-ins the engine's queries are given.
type sandboxBuiltins struct {
	// byName are they, by the name calls use.
	byName map[string]*topdown.Builtin
	// renamed maps each bounded OPA built-in's name to its wrapper's, and
	// original back.
	renamed  map[string]ast.Ref
	original map[string]string
	// own are the declarations of Rejuv's own built-ins, and wrappers the
	// wrappers' declarations: the compiler is told of both.
	own, wrappers []*ast.Builtin
}

// sandbox is built once, the first time a module is compiled.
var sandbox = sync.OnceValue(func() *sandboxBuiltins {
	s := &sandboxBuiltins{byName: map[string]*topdown.Builtin{}, renamed: map[string]ast.Ref{}, original: map[string]string{}}
	for _, b := range ownBuiltins() {
		s.own = append(s.own, b.decl)
		s.byName[b.decl.Name] = &topdown.Builtin{Decl: b.decl, Func: b.function()}
	}
	for _, a := range audit {
		if a.verdict != bounded {
			continue
		}
		for _, name := range a.names {
			var check func([]*ast.Term) error
			var result func(*ast.Term) error
			if a.bound != nil {
				check = a.bound(name)
			}
			if a.result != nil {
				result = a.result(name)
			}
			if b, ok := s.byName[name]; ok {
				// One of Rejuv's own, under its own name.
				b.Func = withBound(b.Func, check, result)
				continue
			}
			decl, f := ast.BuiltinMap[name], topdown.GetBuiltin(name)
			if decl == nil || f == nil {
				panic("policy: no built-in " + name + " to bound")
			}
			wrapper := *decl
			wrapper.Name = wrapperName(name)
			if _, taken := s.original[wrapper.Name]; taken {
				panic("policy: two bounded built-ins are wrapped as " + wrapper.Name)
			}
			s.original[wrapper.Name] = name
			s.wrappers = append(s.wrappers, &wrapper)
			s.byName[wrapper.Name] = &topdown.Builtin{Decl: &wrapper, Func: withBound(f, check, result)}
			s.renamed[name] = wrapper.Ref()
		}
	}
	return s
})

// declOf is the declaration of the built-in calls of name reach in the
// engine's queries; nil for none.
func declOf(name string) *ast.Builtin {
	if b := sandbox().byName[name]; b != nil {
		return b.Decl
	}
	return ast.BuiltinMap[name]
}

// opaName is the name OPA gives the built-in a call of name reaches.
func opaName(name string) string {
	if original, ok := sandbox().original[name]; ok {
		return original
	}
	return name
}

// builtinFunc is the function calls of the built-in name reach in the
// engine's queries, bounded if the audit bounds it; nil for none.
func builtinFunc(name string) topdown.BuiltinFunc {
	s := sandbox()
	if ref, ok := s.renamed[name]; ok {
		name = ref.String()
	}
	if b := s.byName[name]; b != nil {
		return b.Func
	}
	return topdown.GetBuiltin(name)
}

// compilerCapabilities are Capabilities and the bounded built-ins'
// wrappers, which the compiler is told of so that it knows their types
// once calls are renamed to them (a with that replaces one function by
// another needs it).
var compilerCapabilities = sync.OnceValue(func() *ast.Capabilities {
	c := *Capabilities()
	c.Builtins = append(slices.Clone(c.Builtins), sandbox().wrappers...)
	return &c
})

// scopeBuiltins is the compiler's last stage: it renames the calls of the
// bounded built-ins in the compiled modules to their wrappers.
func scopeBuiltins(c *ast.Compiler) *ast.Error {
	for _, m := range c.Modules {
		renameBounded(m)
	}
	return nil
}

// renameBounded renames in x, in place, each call of a bounded built-in,
// and each with that replaces one or replaces a function by one, to its
// wrapper.
func renameBounded(x any) {
	renamed := sandbox().renamed
	swap := func(t *ast.Term) *ast.Term {
		if ref, ok := t.Value.(ast.Ref); ok {
			if to, ok := renamed[ref.String()]; ok {
				return ast.NewTerm(to).SetLocation(t.Location)
			}
		}
		return t
	}
	ast.WalkExprs(x, func(e *ast.Expr) bool {
		if terms, ok := e.Terms.([]*ast.Term); ok && e.IsCall() {
			terms[0] = swap(terms[0])
		}
		for _, w := range e.With {
			w.Target, w.Value = swap(w.Target), swap(w.Value)
		}
		return false
	})
	ast.WalkTerms(x, func(t *ast.Term) bool {
		if call, ok := t.Value.(ast.Call); ok {
			call[0] = swap(call[0])
		}
		return false
	})
}
