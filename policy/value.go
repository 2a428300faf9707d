package policy

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ToValue converts a Go value to the ast.Value that encoding/json followed by
// OPA's JSON decoding would give, without the JSON round trip: struct fields
// by their json tags (omitempty, omitzero and inline honoured), the
// Kubernetes types with custom JSON (Time, Quantity, IntOrString, Duration)
// as they marshal. Other json.Marshaler types fall back to the round trip.
func ToValue(v any) (ast.Value, error) {
	if v == nil {
		return ast.NullValue, nil
	}
	rv := reflect.ValueOf(v)
	return encoderFor(rv.Type())(rv)
}

type encoder func(reflect.Value) (ast.Value, error)

var encoders sync.Map // reflect.Type -> encoder

var (
	timeType        = reflect.TypeFor[metav1.Time]()
	microTimeType   = reflect.TypeFor[metav1.MicroTime]()
	quantityType    = reflect.TypeFor[resource.Quantity]()
	intOrStringType = reflect.TypeFor[intstr.IntOrString]()
	durationType    = reflect.TypeFor[metav1.Duration]()
	marshalerType   = reflect.TypeFor[json.Marshaler]()
)

func encoderFor(t reflect.Type) encoder {
	if e, ok := encoders.Load(t); ok {
		return e.(encoder)
	}
	// A recursive type refers to itself while being built: hand out an
	// indirection that resolves once the real encoder is stored.
	var (
		once sync.WaitGroup
		real encoder
	)
	once.Add(1)
	indirect := func(v reflect.Value) (ast.Value, error) {
		once.Wait()
		return real(v)
	}
	if e, loaded := encoders.LoadOrStore(t, encoder(indirect)); loaded {
		return e.(encoder)
	}
	real = newEncoder(t)
	once.Done()
	encoders.Store(t, real)
	return real
}

// ownJSON are the encoders of the Kubernetes types that marshal
// themselves to JSON, as they marshal.
var ownJSON = map[reflect.Type]encoder{
	timeType: func(v reflect.Value) (ast.Value, error) {
		return timeValue(v.Interface().(metav1.Time).Time, time.RFC3339), nil
	},
	microTimeType: func(v reflect.Value) (ast.Value, error) {
		return timeValue(v.Interface().(metav1.MicroTime).Time, "2006-01-02T15:04:05.000000Z07:00"), nil
	},
	quantityType: func(v reflect.Value) (ast.Value, error) {
		q := v.Interface().(resource.Quantity)
		return ast.String(q.String()), nil
	},
	intOrStringType: func(v reflect.Value) (ast.Value, error) {
		is := v.Interface().(intstr.IntOrString)
		if is.Type == intstr.Int {
			return ast.Number(strconv.FormatInt(int64(is.IntVal), 10)), nil
		}
		return ast.String(is.StrVal), nil
	},
	durationType: func(v reflect.Value) (ast.Value, error) {
		return ast.String(v.Interface().(metav1.Duration).Duration.String()), nil
	},
}

// marshalsItself reports whether a value of type t has its own JSON form:
// one of ownJSON's types, or another json.Marshaler.
func marshalsItself(t reflect.Type) bool {
	if _, ok := ownJSON[t]; ok {
		return true
	}
	return t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(marshalerType) || t.Implements(marshalerType)
}

func newEncoder(t reflect.Type) encoder {
	if e, ok := ownJSON[t]; ok {
		return e
	}
	if marshalsItself(t) {
		return marshalerEncoder
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(v reflect.Value) (ast.Value, error) { return ast.Boolean(v.Bool()), nil }
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return func(v reflect.Value) (ast.Value, error) { return ast.Number(strconv.FormatInt(v.Int(), 10)), nil }
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return func(v reflect.Value) (ast.Value, error) { return ast.Number(strconv.FormatUint(v.Uint(), 10)), nil }
	case reflect.Float32, reflect.Float64:
		return func(v reflect.Value) (ast.Value, error) { return floatNumber(v.Float(), t.Bits()), nil }
	case reflect.String:
		return func(v reflect.Value) (ast.Value, error) { return ast.String(v.String()), nil }
	case reflect.Pointer:
		elem := encoderFor(t.Elem())
		return func(v reflect.Value) (ast.Value, error) {
			if v.IsNil() {
				return ast.NullValue, nil
			}
			return elem(v.Elem())
		}
	case reflect.Interface:
		return func(v reflect.Value) (ast.Value, error) {
			if v.IsNil() {
				return ast.NullValue, nil
			}
			e := v.Elem()
			return encoderFor(e.Type())(e)
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return func(v reflect.Value) (ast.Value, error) {
				if v.IsNil() {
					return ast.NullValue, nil
				}
				return ast.String(base64.StdEncoding.EncodeToString(v.Bytes())), nil
			}
		}
		return sliceEncoder(t)
	case reflect.Array:
		return sliceEncoder(t)
	case reflect.Map:
		return mapEncoder(t)
	case reflect.Struct:
		return structEncoder(t)
	default:
		return func(reflect.Value) (ast.Value, error) {
			return nil, fmt.Errorf("convert %s to a Rego value: unsupported kind %s", t, t.Kind())
		}
	}
}

// floatNumber formats f as encoding/json does: without an exponent between
// 1e-6 and 1e21, so that a whole number reads as an integer, which OPA's
// arithmetic handles far faster than a float.
func floatNumber(f float64, bits int) ast.Number {
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		return ast.Number(strconv.FormatFloat(f, 'e', -1, bits))
	}
	return ast.Number(strconv.FormatFloat(f, 'f', -1, bits))
}

func timeValue(t time.Time, layout string) ast.Value {
	if t.IsZero() {
		return ast.NullValue
	}
	return ast.String(t.UTC().Format(layout))
}

func marshalerEncoder(v reflect.Value) (ast.Value, error) {
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return ast.NullValue, nil
	}
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return nil, fmt.Errorf("convert %s to a Rego value: %w", v.Type(), err)
	}
	return ast.ValueFromReader(strings.NewReader(string(raw)))
}

func sliceEncoder(t reflect.Type) encoder {
	elem := encoderFor(t.Elem())
	return func(v reflect.Value) (ast.Value, error) {
		if v.Kind() == reflect.Slice && v.IsNil() {
			return ast.NullValue, nil
		}
		terms := make([]*ast.Term, v.Len())
		for i := range terms {
			x, err := elem(v.Index(i))
			if err != nil {
				return nil, err
			}
			terms[i] = ast.NewTerm(x)
		}
		return ast.NewArray(terms...), nil
	}
}

func mapEncoder(t reflect.Type) encoder {
	if t.Key().Kind() != reflect.String {
		return func(reflect.Value) (ast.Value, error) {
			return nil, fmt.Errorf("convert %s to a Rego value: map keys must be strings", t)
		}
	}
	elem := encoderFor(t.Elem())
	return func(v reflect.Value) (ast.Value, error) {
		if v.IsNil() {
			return ast.NullValue, nil
		}
		obj := ast.NewObjectWithCapacity(v.Len())
		for it := v.MapRange(); it.Next(); {
			x, err := elem(it.Value())
			if err != nil {
				return nil, err
			}
			obj.Insert(ast.StringTerm(it.Key().String()), ast.NewTerm(x))
		}
		return obj, nil
	}
}

// field is one JSON member of a struct, possibly promoted from an inlined
// struct (index is the path of field indexes).
type field struct {
	name      string
	key       *ast.Term
	typ       reflect.Type
	index     []int
	omitEmpty bool
	omitZero  bool
	encode    encoder
}

func structEncoder(t reflect.Type) encoder { return fieldsEncoder(fieldsOf(t)) }

// fieldsEncoder converts a struct to an object of the fields given, each
// by its own encoder, as encoding/json would.
func fieldsEncoder(fields []field) encoder {
	return func(v reflect.Value) (ast.Value, error) {
		obj := ast.NewObjectWithCapacity(len(fields))
		for i := range fields {
			f := &fields[i]
			fv, ok := fieldByIndex(v, f.index)
			if !ok || f.omitEmpty && isEmpty(fv) || f.omitZero && fv.IsZero() {
				continue
			}
			x, err := f.encode(fv)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.name, err)
			}
			obj.Insert(f.key, ast.NewTerm(x))
		}
		return obj, nil
	}
}

func structFields(t reflect.Type, prefix []int) []field {
	var fields []field
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		index := append(append([]int(nil), prefix...), i)
		if sf.Anonymous && name == "" {
			ft := sf.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				fields = append(fields, structFields(ft, index)...)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		fields = append(fields, field{
			name:      name,
			key:       ast.StringTerm(name),
			typ:       sf.Type,
			index:     index,
			omitEmpty: hasOption(opts, "omitempty"),
			omitZero:  hasOption(opts, "omitzero"),
			encode:    encoderFor(sf.Type),
		})
	}
	return fields
}

func hasOption(opts, want string) bool {
	for o := range strings.SplitSeq(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// fieldByIndex walks index, reporting false when an inlined pointer on the
// way is nil (encoding/json then leaves the promoted fields out).
func fieldByIndex(v reflect.Value, index []int) (reflect.Value, bool) {
	for i, x := range index {
		if i > 0 && v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		v = v.Field(x)
	}
	return v, true
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Interface, reflect.Pointer:
		return v.IsZero()
	default:
		return false
	}
}
