package policy

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// podPaths is the part of the pod a policy's rules read, as a tree of field
// names; a node with all set stands for everything below it. Converting
// only that part is most of the cost of a pod that changed.
type podPaths struct {
	all      bool
	children map[string]*podPaths
}

var (
	podKey        = ast.StringTerm("pod")
	everyPodField = &podPaths{all: true}
)

// readPodPaths collects the references to input.pod in modules. A reference
// to input or input.pod as a whole, or one that picks a key with a variable
// at the top, means the whole pod.
func readPodPaths(modules []*ast.Module) *podPaths {
	root := &podPaths{}
	for _, m := range modules {
		ast.WalkRefs(m, func(ref ast.Ref) bool {
			if root.all || !ref[0].Equal(ast.InputRootDocument) {
				return false
			}
			if len(ref) < 3 {
				if len(ref) == 1 || !isString(ref[1]) || ref[1].Equal(podKey) {
					root.all = true
				}
				return false
			}
			if !ref[1].Equal(podKey) {
				if !isString(ref[1]) {
					root.all = true
				}
				return false
			}
			root.add(ref[2:])
			return false
		})
	}
	return root
}

func isString(t *ast.Term) bool {
	_, ok := t.Value.(ast.String)
	return ok
}

// add records path, up to its first term that is not a constant string.
func (p *podPaths) add(path ast.Ref) {
	node := p
	for _, t := range path {
		s, ok := t.Value.(ast.String)
		if !ok || node.all {
			break
		}
		if node.children == nil {
			node.children = map[string]*podPaths{}
		}
		child := node.children[string(s)]
		if child == nil {
			child = &podPaths{}
			node.children[string(s)] = child
		}
		node = child
	}
	// Everything below the last constant key may be read.
	node.all, node.children = true, nil
}

// key is a canonical text of the tree, for caching converted pods by shape.
func (p *podPaths) key() string {
	if p.all {
		return "*"
	}
	names := make([]string, 0, len(p.children))
	for name := range p.children {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteByte('{')
	for _, name := range names {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(p.children[name].key())
		b.WriteByte(',')
	}
	b.WriteByte('}')
	return b.String()
}

// prunedValue converts the parts of v that paths names, as ToValue would.
func prunedValue(v reflect.Value, paths *podPaths) (ast.Value, error) {
	if paths.all {
		return encoderFor(v.Type())(v)
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return ast.NullValue, nil
		}
		return prunedValue(v.Elem(), paths)
	case reflect.Struct:
		if marshalsItself(v.Type()) {
			return encoderFor(v.Type())(v)
		}
		obj := ast.NewObjectWithCapacity(len(paths.children))
		for _, f := range fieldsOf(v.Type()) {
			child := paths.children[f.name]
			if child == nil {
				continue
			}
			fv, ok := fieldByIndex(v, f.index)
			if !ok || f.omitEmpty && isEmpty(fv) || f.omitZero && fv.IsZero() {
				continue
			}
			x, err := prunedValue(fv, child)
			if err != nil {
				return nil, err
			}
			obj.Insert(f.key, ast.NewTerm(x))
		}
		return obj, nil
	case reflect.Map:
		if v.IsNil() || v.Type().Key().Kind() != reflect.String {
			return encoderFor(v.Type())(v)
		}
		obj := ast.NewObjectWithCapacity(len(paths.children))
		for name, child := range paths.children {
			mv := v.MapIndex(reflect.ValueOf(name).Convert(v.Type().Key()))
			if !mv.IsValid() {
				continue
			}
			x, err := prunedValue(mv, child)
			if err != nil {
				return nil, err
			}
			obj.Insert(ast.StringTerm(name), ast.NewTerm(x))
		}
		return obj, nil
	default:
		// A scalar or a list read by a constant key: there is nothing to
		// leave out below it.
		return encoderFor(v.Type())(v)
	}
}

var fieldCache sync.Map // reflect.Type -> []field

func fieldsOf(t reflect.Type) []field {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]field)
	}
	f, _ := fieldCache.LoadOrStore(t, structFields(t, nil))
	return f.([]field)
}
