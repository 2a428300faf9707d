package rules

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"testing"
)

func TestResolve(t *testing.T) {
	tests := []struct {
		rule  string
		given map[string]any
		want  map[string]any // the resolved values to check; nil when an error is wanted
		err   string
	}{{
		rule: "memory-leak",
		want: map[string]any{
			"minGrowthPerHour": int64(20 << 20), "minObservation": 3600.0, "minSamples": int64(10),
			"minFit": 0.8, "limitFraction": 0.9, "horizon": 3600.0,
		},
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minGrowthPerHour": "50Mi", "minObservation": "30m", "minSamples": json.Number("20"), "minFit": json.Number("0.95")},
		want:  map[string]any{"minGrowthPerHour": int64(50 << 20), "minObservation": 1800.0, "minSamples": int64(20), "minFit": 0.95},
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minGrowthPerHour": 1048576.0, "horizon": "1h30m", "minSamples": 12.0, "limitFraction": 1.0},
		want:  map[string]any{"minGrowthPerHour": int64(1 << 20), "horizon": 5400.0, "minSamples": int64(12), "limitFraction": 1.0},
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minGrowthPerHour": "0.5Gi", "minObservation": "90s"},
		want:  map[string]any{"minGrowthPerHour": int64(512 << 20), "minObservation": 90.0},
	}, {
		rule:  "memory-near-limit",
		given: map[string]any{"fraction": 1},
		want:  map[string]any{"fraction": 1.0},
	}, {
		rule:  "max-age",
		given: map[string]any{"maxAge": "168h", "jitter": "0s"},
		want:  map[string]any{"maxAge": 604800.0, "jitter": 0.0},
	}, {
		rule:  "restart-storm",
		given: map[string]any{"minRestarts": 3, "window": "500ms"},
		want:  map[string]any{"minRestarts": int64(3), "window": 0.5},
	}, {
		rule:  "stuck-readiness",
		given: map[string]any{"notReadyFor": "10 minutes"},
		err:   `parameter "notReadyFor": "10 minutes" is not a duration (e.g. 10m, 1h30m)`,
	}, {
		rule:  "stuck-readiness",
		given: map[string]any{"notReadyFor": 600.0},
		err:   `parameter "notReadyFor": 600 is not a duration: give it with a unit, e.g. "600s"`,
	}, {
		rule:  "stuck-readiness",
		given: map[string]any{"notReadyFor": true},
		err:   `parameter "notReadyFor": true is not a duration (e.g. 10m, 1h30m)`,
	}, {
		rule:  "stuck-readiness",
		given: map[string]any{"notReadyFor": nil},
		err:   `parameter "notReadyFor": null is not a duration (e.g. 10m, 1h30m)`,
	}, {
		rule:  "stuck-startup",
		given: map[string]any{"startupFor": "-5m"},
		err:   `parameter "startupFor": "-5m" must be greater than zero`,
	}, {
		rule:  "max-age",
		given: map[string]any{"maxAge": "0s"},
		err:   `parameter "maxAge": "0s" must be greater than zero`,
	}, {
		rule:  "max-age",
		given: map[string]any{"jitter": "-1m"},
		err:   `parameter "jitter": "-1m" must not be negative`,
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minGrowth": "50Mi"},
		err:   `unknown parameter "minGrowth" (known: growthHorizon, horizon, limitFraction, minFit, minGrowthPerHour, minObservation, minSamples, minSustained, oomLifetimeFraction)`,
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minGrowthPerHour": "50MB"},
		err:   `parameter "minGrowthPerHour": "50MB" is not a quantity (e.g. 50Mi, 1Gi)`,
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minGrowthPerHour": "0"},
		err:   `parameter "minGrowthPerHour": "0" must be greater than zero`,
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minGrowthPerHour": -1048576.0},
		err:   `parameter "minGrowthPerHour": -1048576 must be greater than zero`,
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minSamples": 12.5},
		err:   `parameter "minSamples": 12.5 is not an integer`,
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minSamples": "12"},
		err:   `parameter "minSamples": "12" is not an integer`,
	}, {
		rule:  "restart-storm",
		given: map[string]any{"minRestarts": json.Number("0")},
		err:   `parameter "minRestarts": 0 must be greater than zero`,
	}, {
		rule:  "memory-near-limit",
		given: map[string]any{"fraction": 0.0},
		err:   `parameter "fraction": 0 is not a fraction in (0, 1]`,
	}, {
		rule:  "memory-near-limit",
		given: map[string]any{"fraction": 1.5},
		err:   `parameter "fraction": 1.5 is not a fraction in (0, 1]`,
	}, {
		rule:  "memory-near-limit",
		given: map[string]any{"fraction": "90%"},
		err:   `parameter "fraction": "90%" is not a fraction in (0, 1]`,
	}, {
		rule:  "memory-leak",
		given: map[string]any{"minFit": 2.0, "horizon": "soon", "extra": 1.0},
		err:   `unknown parameter "extra" (known: growthHorizon, horizon, limitFraction, minFit, minGrowthPerHour, minObservation, minSamples, minSustained, oomLifetimeFraction); parameter "horizon": "soon" is not a duration (e.g. 10m, 1h30m); parameter "minFit": 2 is not a fraction in (0, 1]`,
	}}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			r, ok := Lookup(tt.rule)
			if !ok {
				t.Fatalf("no rule %s", tt.rule)
			}
			before := maps.Clone(tt.given)
			got, err := r.Resolve(tt.given)
			if !reflect.DeepEqual(tt.given, before) {
				t.Errorf("Resolve changed its argument")
			}
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("Resolve(%v) error =\n  %v\nwant\n  %s", tt.given, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Resolve(%v): %v", tt.given, err)
			}
			if len(got) != len(r.Parameters) {
				t.Errorf("resolved %d parameters, want all %d: %v", len(got), len(r.Parameters), got)
			}
			for name, want := range tt.want {
				if got[name] != want {
					t.Errorf("%s = %#v, want %#v", name, got[name], want)
				}
			}
		})
	}
}

func TestParameterErrors(t *testing.T) {
	r, _ := Lookup("memory-leak")
	_, err := r.Resolve(map[string]any{"minGrowth": "1Mi", "minFit": 0.0})
	var errs ParameterErrors
	if !errors.As(err, &errs) {
		t.Fatalf("error %T is not ParameterErrors", err)
	}
	want := ParameterErrors{
		{Parameter: "minFit", Problem: "0 is not a fraction in (0, 1]"},
		{
			Parameter: "minGrowth",
			Problem:   "unknown parameter (known: growthHorizon, horizon, limitFraction, minFit, minGrowthPerHour, minObservation, minSamples, minSustained, oomLifetimeFraction)",
			Unknown:   true,
			Known:     []string{"growthHorizon", "horizon", "limitFraction", "minFit", "minGrowthPerHour", "minObservation", "minSamples", "minSustained", "oomLifetimeFraction"},
		},
	}
	if !reflect.DeepEqual(errs, want) {
		t.Errorf("errors = %#v\nwant %#v", errs, want)
	}
}

// TestResolveOtherTypes covers a number parameter (no built-in has one yet)
// and a rule without parameters.
func TestResolveOtherTypes(t *testing.T) {
	r := Rule{Name: "custom", Parameters: []Parameter{{Name: "factor", Type: TypeNumber, Default: 1.5, Description: "d"}}}
	for _, tt := range []struct {
		given any
		want  any
		err   string
	}{
		{given: -2.5, want: -2.5},
		{given: json.Number("0"), want: 0.0},
		{given: int64(7), want: 7.0},
		{given: "2", err: `parameter "factor": "2" is not a number`},
		{given: json.Number("1e999"), err: `parameter "factor": 1e999 is not a number`},
	} {
		got, err := r.Resolve(map[string]any{"factor": tt.given})
		switch {
		case tt.err != "" && (err == nil || err.Error() != tt.err):
			t.Errorf("Resolve(%v) error = %v, want %s", tt.given, err, tt.err)
		case tt.err == "" && (err != nil || got["factor"] != tt.want):
			t.Errorf("Resolve(%v) = %v, %v, want %v", tt.given, got, err, tt.want)
		}
	}
	_, err := Rule{Name: "bare"}.Resolve(map[string]any{"x": 1})
	if want := `unknown parameter "x" (the rule takes none)`; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}
