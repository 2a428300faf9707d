package rules

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/rejuv-dev/rejuv/policy"
)

// BenchmarkRules evaluates each rule for one pod of three containers, as the
// engine does (prepared query, input as an ast.Value): once healthy, the
// common case across a fleet, and once with every container matching, the
// case that builds reasons. The baseline is the cost of any evaluation.
func BenchmarkRules(b *testing.B) {
	baseline := Rule{
		Name: "baseline", Package: "rejuv.rules.baseline", Module: "baseline.rego",
		Source: "package rejuv.rules.baseline\n\nrecreate contains c.name if {\n\tsome c in input.containers\n\tc.state == \"gone\"\n}\n\nno_data := set()\n",
	}
	for _, r := range append([]Rule{baseline}, Builtins()...) {
		pq, err := rego.New(policy.WithOwnBuiltins(
			rego.Query("recreate := data."+r.Package+".recreate; no_data := data."+r.Package+".no_data"),
			rego.Module(r.Module, r.Source),
			rego.Capabilities(sandbox()),
		)...).PrepareForEval(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		params, _ := r.Resolve(nil)
		for _, c := range []struct {
			name string
			sick bool
		}{{"healthy", false}, {"matching", true}} {
			in := benchPod(r.Name, c.sick)
			in["parameters"] = params
			value := ast.MustInterfaceToValue(in)
			b.Run(r.Name+"/"+c.name, func(b *testing.B) {
				for b.Loop() {
					rs, err := pq.Eval(context.Background(), rego.EvalParsedInput(value))
					if err != nil || len(rs) != 1 {
						b.Fatal(rs, err)
					}
					if n := len(rs[0].Bindings["recreate"].([]any)); r.Name != baseline.Name && c.sick != (n == 3) {
						b.Fatalf("recreate has %d entries", n)
					}
				}
			})
		}
	}
}

// benchPod is the input for one pod of two containers and a sidecar, all
// healthy or all due for recreation by rule.
func benchPod(rule string, sick bool) map[string]any {
	containers := make([]any, 0, 3)
	for _, nk := range [][2]string{{"app", "container"}, {"proxy", "container"}, {"mesh", "sidecar"}} {
		c := map[string]any{
			"name": nk[0], "kind": nk[1], "image": "shop/web:1.0",
			"ready": true, "started": true, "state": "running",
			"startedAt": "2026-03-01T10:00:00Z", "restartCount": 1,
			"lastTermination": map[string]any{"reason": "Error", "exitCode": 1, "finishedAt": "2026-03-01T09:59:58Z"},
			"notReadySince":   nil,
			"resources":       map[string]any{"requests": map[string]any{"memory": 256 << 20, "cpu": 100}, "limits": map[string]any{"memory": 512 << 20}},
			"memory": map[string]any{
				"workingSetBytes": 200 << 20, "samples": 120, "windowSeconds": 3600,
				"slopeBytesPerSecond": 1.5, "r2": 0.1,
			},
			"recreations": map[string]any{"total": 0, "last": nil},
		}
		if sick {
			// Past its startup probe for stuck-readiness, which judges only that.
			c["ready"], c["started"], c["notReadySince"] = false, rule == "stuck-readiness", "2026-03-01T10:00:00Z"
			c["startedAt"], c["restartCount"] = "2026-02-20T10:00:00Z", 12
			c["lastTermination"].(map[string]any)["finishedAt"] = "2026-03-01T11:59:00Z"
			c["memory"] = map[string]any{
				"workingSetBytes": 500 << 20, "samples": 120, "windowSeconds": 3600,
				"slopeBytesPerSecond": 20000, "r2": 0.97,
			}
		}
		containers = append(containers, c)
	}
	return map[string]any{
		"now":    "2026-03-01T12:00:00Z",
		"policy": map[string]any{"name": "web-health", "namespace": "shop"},
		"pod": map[string]any{"metadata": map[string]any{
			"name": "web-0", "namespace": "shop", "uid": "6f1c2d3e-0000-4000-8000-000000000001",
			"labels": map[string]any{"app": "web"},
		}},
		"containers": containers,
	}
}
