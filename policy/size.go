package policy

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// MaxValueBytes bounds what one call of a built-in that reads its operands
// whole may read or write: the strings it joins, formats, serializes,
// sorts or compares. Rego values share their parts, so a comprehension of a
// hundred thousand references to one 1 MB string costs almost nothing to
// build, while concat over it would allocate 100 GB at once, where no
// deadline can interrupt it. A pod's document is a few kilobytes.
const MaxValueBytes = 1 << 20

// nodeBytes is what each element of a collection counts for.
const nodeBytes = 8

// sizeOver says whether the operands, read whole, are over limit bytes.
// It stops as soon as they are, so the check costs at most the bound.
func sizeOver(limit int, ops ...*ast.Term) bool {
	left := limit
	for _, op := range ops {
		if !within(op.Value, &left) {
			return true
		}
	}
	return false
}

func within(v ast.Value, left *int) bool {
	switch x := v.(type) {
	case ast.String:
		*left -= len(x)
	case ast.Number:
		*left -= len(x)
	case *ast.Array:
		x.Until(func(t *ast.Term) bool { *left -= nodeBytes; return !within(t.Value, left) })
	case ast.Set:
		x.Until(func(t *ast.Term) bool { *left -= nodeBytes; return !within(t.Value, left) })
	case ast.Object:
		x.Until(func(k, t *ast.Term) bool { *left -= nodeBytes; return !within(k.Value, left) || !within(t.Value, left) })
	default:
		*left -= nodeBytes
	}
	return *left >= 0
}

// sizeBound is the check of a built-in whose operands are read whole.
func sizeBound(name string) func([]*ast.Term) error {
	return func(ops []*ast.Term) error {
		if sizeOver(MaxValueBytes, ops...) {
			return fmt.Errorf("%s: its operands are over the sandbox's bound of %d bytes", name, MaxValueBytes)
		}
		return nil
	}
}

// resultSizeBound is the check of a built-in whose result, cheap to build,
// is read whole by what uses it.
func resultSizeBound(name string) func(*ast.Term) error {
	return func(t *ast.Term) error {
		if sizeOver(MaxValueBytes, t) {
			return fmt.Errorf("%s: its result is over the sandbox's bound of %d bytes", name, MaxValueBytes)
		}
		return nil
	}
}

// concatBound also counts the separator once per element.
func concatBound(ops []*ast.Term) error {
	sep, _ := ops[0].Value.(ast.String)
	n := 0
	switch c := ops[1].Value.(type) {
	case *ast.Array:
		n = c.Len()
	case ast.Set:
		n = c.Len()
	}
	if len(sep)*n > MaxValueBytes || sizeOver(MaxValueBytes-len(sep)*n, ops[1]) {
		return fmt.Errorf("concat: the result would be over the sandbox's bound of %d bytes", MaxValueBytes)
	}
	return nil
}

// sprintfBound also counts the widths and precisions of the format's
// verbs, which pad the result (Go caps each at a million). A width taken
// from the arguments (*) is refused rather than matched to its argument.
func sprintfBound(ops []*ast.Term) error {
	format, _ := ops[0].Value.(ast.String)
	padding := 0
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		for i++; i < len(format) && !isVerb(format[i]); i++ {
			if format[i] == '*' {
				return fmt.Errorf("sprintf: a width or precision taken from the arguments (*) is over the sandbox's bound: write it in the format")
			}
			n := 0
			for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
				n = min(n*10+int(format[i]-'0'), MaxValueBytes+1)
			}
			padding += n
			if i < len(format) && isVerb(format[i]) {
				break
			}
		}
	}
	if padding > MaxValueBytes || sizeOver(MaxValueBytes-padding, ops[0], ops[1]) {
		return fmt.Errorf("sprintf: the result would be over the sandbox's bound of %d bytes", MaxValueBytes)
	}
	return nil
}

func isVerb(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '%'
}

// prettyBound bounds json.marshal_with_options's indented result: every
// element and key is a line of the prefix and one indent per level.
func prettyBound(ops []*ast.Term) error {
	opts, _ := ops[1].Value.(ast.Object)
	text := func(key string) int {
		if opts == nil {
			return 0
		}
		if s, ok := opts.Get(ast.StringTerm(key)).Value.(ast.String); ok {
			return len(s)
		}
		return 0
	}
	var indent, prefix int
	if opts != nil && opts.Get(ast.StringTerm("indent")) != nil {
		indent = text("indent")
	}
	if opts != nil && opts.Get(ast.StringTerm("prefix")) != nil {
		prefix = text("prefix")
	}
	left := MaxValueBytes
	if indent+prefix > MaxValueBytes || !prettyWithin(ops[0].Value, 1, indent, prefix, &left) {
		return fmt.Errorf("json.marshal_with_options: the indented result would be over the sandbox's bound of %d bytes", MaxValueBytes)
	}
	return nil
}

func prettyWithin(v ast.Value, depth, indent, prefix int, left *int) bool {
	line := func() bool { *left -= prefix + depth*indent; return *left >= 0 }
	switch x := v.(type) {
	case *ast.Array:
		x.Until(func(t *ast.Term) bool { return !line() || !prettyWithin(t.Value, depth+1, indent, prefix, left) })
	case ast.Set:
		x.Until(func(t *ast.Term) bool { return !line() || !prettyWithin(t.Value, depth+1, indent, prefix, left) })
	case ast.Object:
		x.Until(func(k, t *ast.Term) bool {
			return !line() || !within(k.Value, left) || !prettyWithin(t.Value, depth+1, indent, prefix, left)
		})
	default:
		return within(v, left)
	}
	return *left >= 0
}

// subsetBound bounds object.subset, which compares each part of the one
// with each part of the other: the product of their sizes is bounded.
func subsetBound(ops []*ast.Term) error {
	if err := sizeBound("object.subset")(ops); err != nil {
		return err
	}
	a, b := MaxValueBytes, MaxValueBytes
	within(ops[0].Value, &a)
	within(ops[1].Value, &b)
	if (MaxValueBytes-a)/nodeBytes*((MaxValueBytes-b)/nodeBytes) > maxPatternWork {
		return fmt.Errorf("object.subset: operands of %d and %d bytes are over the sandbox's bound for the product of their sizes", MaxValueBytes-a, MaxValueBytes-b)
	}
	return nil
}
