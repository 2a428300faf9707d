package policy

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/pods"
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

// podShape converts the fields of a pod that a program's rules read, and
// nothing else: its encoder is built once, when the program is compiled, by
// following the paths down the Pod type, so that converting a pod is one
// call that visits only those fields. Programs of the same shape share a
// pod's converted value (key).
type podShape struct {
	key    string
	encode encoder
	// empty is set when the rules read no field of the pod.
	empty bool
	// trim is set when the shape reads, as a whole, a part of the pod that
	// pods.Trim prunes: the pod is trimmed before it is converted.
	trim bool
}

var (
	podType = reflect.TypeFor[corev1.Pod]()
	// noPodFields is input.pod of a shape that reads no field of it.
	noPodFields = ast.ObjectTerm()
)

func newPodShape(paths *podPaths) *podShape {
	return &podShape{
		key:    paths.key(),
		encode: prunedEncoder(podType, paths),
		empty:  !paths.all && len(paths.children) == 0,
		trim:   needsTrim(paths),
	}
}

// convert gives input.pod: the pod's fields of the shape, of those the
// manager keeps (pods.Trim).
func (s *podShape) convert(pod *corev1.Pod) (*ast.Term, error) {
	if s.empty {
		return noPodFields, nil
	}
	if s.trim {
		pod = pods.Trim(pod)
	}
	v, err := s.encode(reflect.ValueOf(pod).Elem())
	if err != nil {
		return nil, fmt.Errorf("convert the pod: %w", err)
	}
	return ast.NewTerm(v), nil
}

// prunedEncoder is the encoder of the parts of a t that paths names, as
// ToValue would convert them.
func prunedEncoder(t reflect.Type, paths *podPaths) encoder {
	if paths.all {
		return encoderFor(t)
	}
	switch t.Kind() {
	case reflect.Pointer:
		elem := prunedEncoder(t.Elem(), paths)
		return func(v reflect.Value) (ast.Value, error) {
			if v.IsNil() {
				return ast.NullValue, nil
			}
			return elem(v.Elem())
		}
	case reflect.Struct:
		if marshalsItself(t) {
			return encoderFor(t)
		}
		return prunedStructEncoder(t, paths)
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return encoderFor(t)
		}
		return prunedMapEncoder(t, paths)
	default:
		// A scalar, a list read by a constant key, or an interface whose
		// type only a value tells: there is nothing to leave out below it.
		return encoderFor(t)
	}
}

// prunedStructEncoder converts the members of a struct that paths names.
func prunedStructEncoder(t reflect.Type, paths *podPaths) encoder {
	var members []field
	for _, f := range fieldsOf(t) {
		if child := paths.children[f.name]; child != nil {
			f.encode = prunedEncoder(f.typ, child)
			members = append(members, f)
		}
	}
	return fieldsEncoder(members)
}

// prunedMapEncoder converts the entries of a map with string keys that
// paths names.
func prunedMapEncoder(t reflect.Type, paths *podPaths) encoder {
	type entry struct {
		key    reflect.Value
		term   *ast.Term
		encode encoder
	}
	var entries []entry
	for name, child := range paths.children {
		entries = append(entries, entry{key: reflect.ValueOf(name).Convert(t.Key()), term: ast.StringTerm(name), encode: prunedEncoder(t.Elem(), child)})
	}
	return func(v reflect.Value) (ast.Value, error) {
		if v.IsNil() {
			return ast.NullValue, nil
		}
		obj := ast.NewObjectWithCapacity(len(entries))
		for i := range entries {
			e := &entries[i]
			mv := v.MapIndex(e.key)
			if !mv.IsValid() {
				continue
			}
			x, err := e.encode(mv)
			if err != nil {
				return nil, err
			}
			obj.Insert(e.term, ast.NewTerm(x))
		}
		return obj, nil
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
