package policy

import (
	"fmt"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// mapKey is the key a filled map holds: it stands for any key.
const mapKey = "*"

// keptPod is input.pod of a pod whose every field is set, trimmed as the
// manager keeps pods (pods.Trim): the tree of the fields rules can read,
// with maps holding the single key mapKey and lists a single element.
var keptPod = sync.OnceValue(func() ast.Value { return filledPod(true) })

// fullPod is input.pod of a pod whose every field is set, untrimmed.
var fullPod = sync.OnceValue(func() ast.Value { return filledPod(false) })

func filledPod(trim bool) ast.Value {
	pod := &corev1.Pod{}
	fill(reflect.ValueOf(pod).Elem(), 0)
	if trim {
		pod = pods.Trim(pod)
	}
	v, err := encoderFor(podType)(reflect.ValueOf(pod).Elem())
	if err != nil {
		panic(fmt.Sprintf("convert the filled pod: %v", err))
	}
	return v
}

// needsTrim says whether paths read, as a whole, a part of the pod of
// which pods.Trim drops something: a pod from anywhere but the manager's
// cache (the plugin reads them from the API server) must then be trimmed
// first, so that its rules see what the manager's would.
func needsTrim(paths *podPaths) bool {
	return trimsBelow(paths, keptPod(), fullPod())
}

func trimsBelow(paths *podPaths, kept, full ast.Value) bool {
	if paths.all {
		return kept.Compare(full) != 0
	}
	keptObj, ok1 := kept.(ast.Object)
	fullObj, ok2 := full.(ast.Object)
	if !ok1 || !ok2 {
		// A list, or a scalar: reading by constant keys stops there.
		return kept.Compare(full) != 0
	}
	for name, child := range paths.children {
		k, f := keptObj.Get(ast.StringTerm(name)), fullObj.Get(ast.StringTerm(name))
		if k == nil || f == nil {
			// Not kept (refused when compiled), or not a field.
			continue
		}
		if trimsBelow(child, k.Value, f.Value) {
			return true
		}
	}
	return false
}

// Values of the types that convert themselves, filled.
var filled = map[reflect.Type]reflect.Value{
	reflect.TypeFor[metav1.Time]():        reflect.ValueOf(metav1.NewTime(time.Unix(1, 0))),
	reflect.TypeFor[metav1.MicroTime]():   reflect.ValueOf(metav1.NewMicroTime(time.Unix(1, 0))),
	reflect.TypeFor[resource.Quantity]():  reflect.ValueOf(resource.MustParse("1")),
	reflect.TypeFor[intstr.IntOrString](): reflect.ValueOf(intstr.FromString(mapKey)),
	// Raw JSON, as managedFields hold.
	reflect.TypeFor[[]byte](): reflect.ValueOf([]byte("{}")),
}

// fill sets every exported field below v: strings to mapKey, numbers to
// 1, booleans to true, a list to one element, a map to the key mapKey.
func fill(v reflect.Value, depth int) {
	if depth > 16 {
		return
	}
	if f, ok := filled[v.Type()]; ok {
		v.Set(f)
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(mapKey)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMapWithSize(v.Type(), 1)
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, depth+1)
		fill(e, depth+1)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		for _, f := range v.Fields() {
			if f.CanSet() {
				fill(f, depth+1)
			}
		}
	}
}

// refuseUnkeptPodFields refuses references to fields of input.pod that
// the manager does not keep (see pods.Trim): they would be undefined for
// every pod, and the rule would silently never match.
func refuseUnkeptPodFields(module *ast.Module) error {
	var errs ast.Errors
	ast.WalkRefs(module, func(ref ast.Ref) bool {
		if len(ref) < 3 || !ref[0].Equal(ast.InputRootDocument) || !ref[1].Equal(podKey) {
			return false
		}
		if path, kept := keptPath(keptPod(), ref[2:]); !kept {
			errs = append(errs, ast.NewError(ast.CompileErr, ref[0].Location,
				"input.pod.%s is not kept: the manager keeps only some fields of each pod (see docs/rules.md, \"What input.pod holds\")", path))
		}
		return false
	})
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// keptPath follows path down the kept pod: false, with the path up to the
// first field that is not kept, when it leaves the tree. A variable key
// may name any field, and below a scalar there is nothing to leave.
func keptPath(node ast.Value, path ast.Ref) (string, bool) {
	var names []string
	for _, t := range path {
		switch n := node.(type) {
		case ast.Object:
			key, ok := t.Value.(ast.String)
			if !ok {
				return "", true
			}
			names = append(names, string(key))
			if anyKey := n.Get(ast.StringTerm(mapKey)); anyKey != nil && n.Len() == 1 {
				node = anyKey.Value
				continue
			}
			child := n.Get(t)
			if child == nil {
				return strings.ReplaceAll(strings.Join(names, "."), ".[", "["), false
			}
			node = child.Value
		case *ast.Array:
			names = append(names, "[_]")
			node = n.Elem(0).Value
		default:
			return "", true
		}
	}
	return "", true
}
