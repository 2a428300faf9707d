package policy

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"
)

// regoFormatting is how the built-in rules formatted their reasons in Rego
// before the formatting built-ins: the built-ins must write the same text.
const regoFormatting = `package fmt
import rego.v1

format_duration(seconds) := "0s" if {
	round(seconds) < 1
} else := concat("", [sprintf("%d%s", [n, unit]) |
	t := round(seconds)
	some [n, unit] in [[floor(t / 3600), "h"], [floor((t % 3600) / 60), "m"], [t % 60, "s"]]
	n > 0
])

format_bytes(b) := sprintf("%sGi", [format_number(b / 1073741824)]) if {
	b >= 1073741824
} else := sprintf("%sMi", [format_number(b / 1048576)]) if {
	b >= 1048576
} else := sprintf("%sKi", [format_number(b / 1024)]) if {
	b >= 1024
} else := format_number(b)

format_number(x) := sprintf("%d", [floor(h / 100)]) if {
	h := round(x * 100)
	h % 100 == 0
} else := sprintf("%d.%d", [floor(h / 100), floor((h % 100) / 10)]) if {
	h := round(x * 100)
	h % 10 == 0
} else := sprintf("%d.%02d", [floor(h / 100), h % 100]) if {
	h := round(x * 100)
}

cases contains [x, format_number(x), rejuv.format_number(x), format_bytes(x), rejuv.format_bytes(x), format_duration(x), rejuv.format_duration(x)] if {
	some x in input
}
`

func TestFormattingBuiltinsWriteWhatTheRegoHelpersWrote(t *testing.T) {
	inputs := []any{0, 0.004, 0.005, 0.93, 1, 1.5, 12.345, 50, 59.6, 99.999, 117.74, 750, 1023, 1024, 1536, 3599.5, 3600, 3661,
		52428800, 123456789, 314572800, 1073741824, 1610612736, 5e9, 86400.4, 90061,
		1e20, 40000000, 2.5e7 + 0.125}
	for i := range 200 {
		inputs = append(inputs, float64(i)*7.77, i*1048576/3, i*13)
	}
	rs, err := rego.New(WithOwnBuiltins(rego.Module("fmt.rego", regoFormatting), rego.Query("data.fmt.cases"), rego.Input(inputs))...).Eval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cases := rs[0].Expressions[0].Value.([]any)
	if len(cases) < 100 {
		t.Fatalf("%d cases, want every input", len(cases))
	}
	for _, c := range cases {
		row := c.([]any)
		for i, name := range []string{"format_number", "format_bytes", "format_duration"} {
			if row[1+2*i] != row[2+2*i] {
				t.Errorf("%s(%v): rejuv.%s wrote %q, the Rego helper %q", name, row[0], name, row[2+2*i], row[1+2*i])
			}
		}
	}
}

func TestFormattingBuiltinsOnNegativeAndWrongOperands(t *testing.T) {
	for query, want := range map[string]any{
		`rejuv.format_number(-1.25)`:   "-1.25",
		`rejuv.format_bytes(-1572864)`: "-1.5Mi",
		`rejuv.format_duration(-5)`:    "0s",
	} {
		rs, err := rego.New(WithOwnBuiltins(rego.Query(query))...).Eval(context.Background())
		if err != nil || len(rs) == 0 || rs[0].Expressions[0].Value != want {
			t.Errorf("%s = %v (%v), want %q", query, rs, err, want)
		}
	}
	_, err := rego.New(WithOwnBuiltins(rego.Query(`rejuv.format_bytes("1Mi")`))...).Eval(context.Background())
	if err == nil {
		t.Error("a string operand was accepted")
	}
}
