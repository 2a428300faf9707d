package plugin

import (
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Reasons and messages come from objects that tenants write (a rule's
// reason, a request's message, a policy's halt): printed as they are, an
// escape sequence would clear or redraw an admin's terminal, and a
// carriage return, newline or tab would forge a row or a cell of another
// namespace in kubectl rejuv status -A. So every text from an object that
// the plugin prints goes through printable; JSON and YAML are encoded
// already.

// printable writes the runes of s that a terminal or a table would act
// on (control characters including newline, carriage return, tab and
// escape, and other runes that are not printable, such as bidirectional
// overrides) as Go escapes (\n, \x1b, \u202e), and bytes that are not
// UTF-8 as \xNN; the rest is kept.
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], string(utf8.RuneError)):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == utf8.RuneError || !unicode.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// printf is fmt.Fprintf with each text argument (a string, an error, a
// Stringer, a value of a string type) made printable: the format is the
// plugin's, the arguments may be a tenant's.
func printf(w io.Writer, format string, args ...any) {
	safe := make([]any, len(args))
	for i, a := range args {
		switch v := a.(type) {
		case string:
			safe[i] = printable(v)
		case error:
			safe[i] = printable(v.Error())
		case fmt.Stringer:
			safe[i] = printable(v.String())
		default:
			if rv := reflect.ValueOf(a); rv.Kind() == reflect.String {
				safe[i] = printable(rv.String())
			} else {
				safe[i] = a
			}
		}
	}
	fmt.Fprintf(w, format, safe...)
}
