package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/util"
	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/policy"
)

// PreparedSample is how many pods OPA's prepared query fed JSON evaluates
// in a measure: it takes about ten times the engine's time a pod, so a
// whole fleet would take minutes.
const PreparedSample = 2000

// PreparedJSON prepares each rule's query once, OPA's way, and returns an
// evaluation of a target that feeds the queries the input a simple
// implementation builds (Go maps through encoding/json), with the time
// now: the reference Rejuv's engine is compared with.
func PreparedJSON(prules []policy.Rule, now time.Time) (func(policy.Target) (int, error), error) {
	type prepared struct {
		q      rego.PreparedEvalQuery
		params any
	}
	var qs []prepared
	for _, r := range prules {
		module, err := ast.ParseModuleWithOpts(r.Name+".rego", r.Module, ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			return nil, fmt.Errorf("parse rule %s: %w", r.Name, err)
		}
		q, err := rego.New(policy.WithOwnBuiltins(rego.ParsedModule(module), rego.Query(module.Package.Path.String()+".recreate"))...).PrepareForEval(context.Background())
		if err != nil {
			return nil, fmt.Errorf("prepare rule %s: %w", r.Name, err)
		}
		params, err := RoundTrip(r.Parameters)
		if err != nil {
			return nil, fmt.Errorf("rule %s's parameters: %w", r.Name, err)
		}
		qs = append(qs, prepared{q: q, params: params})
	}
	return func(t policy.Target) (int, error) {
		n := 0
		input := JSONInput(t, now)
		for _, p := range qs {
			input["parameters"] = p.params
			in, err := RoundTrip(input)
			if err != nil {
				return 0, err
			}
			rs, err := p.q.Eval(context.Background(), rego.EvalInput(in), rego.EvalTime(now))
			if err != nil {
				return 0, fmt.Errorf("pod %s: %w", t.Pod.Name, err)
			}
			n += CountSet(rs)
		}
		return n, nil
	}, nil
}

// CountSet is the size of the set a query's first expression gave.
func CountSet(rs rego.ResultSet) int {
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return 0
	}
	set, _ := rs[0].Expressions[0].Value.([]any)
	return len(set)
}

// RoundTrip is the JSON round trip a simple implementation does.
func RoundTrip(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode the input: %w", err)
	}
	var out any
	if err := util.UnmarshalJSON(raw, &out); err != nil {
		return nil, fmt.Errorf("decode the input: %w", err)
	}
	return out, nil
}

// JSONInput is the input document the way a simple implementation builds
// it: the pod and the candidates as Go maps, through encoding/json.
func JSONInput(t policy.Target, now time.Time) map[string]any {
	pod := t.Pod.DeepCopy()
	pod.ManagedFields = nil
	statuses := map[string]map[string]any{}
	for _, list := range [][]corev1.ContainerStatus{t.Pod.Status.ContainerStatuses, t.Pod.Status.InitContainerStatuses} {
		for _, s := range list {
			statuses[s.Name] = containerStatus(s)
		}
	}
	specs := map[string]map[string]any{}
	for _, c := range t.Pod.Spec.InitContainers {
		specs[c.Name] = map[string]any{"kind": "sidecar", "image": c.Image, "resources": resources(c.Resources)}
	}
	for _, c := range t.Pod.Spec.Containers {
		specs[c.Name] = map[string]any{"kind": "container", "image": c.Image, "resources": resources(c.Resources)}
	}
	var containers []any
	for _, c := range t.Containers {
		entry := map[string]any{"name": c.Name, "notReadySince": timeOrNil(c.NotReadySince),
			"recreations": map[string]any{"total": c.Recreations, "last": timeOrNil(c.LastRecreation)}, "memory": nil}
		maps.Copy(entry, specs[c.Name])
		maps.Copy(entry, statuses[c.Name])
		if m := c.Memory; m != nil {
			entry["memory"] = map[string]any{"workingSetBytes": m.WorkingSetBytes, "samples": m.Samples, "windowSeconds": m.WindowSeconds,
				"slopeBytesPerSecond": m.SlopeBytesPerSecond, "r2": m.R2,
				"startSlopeBytesPerSecond": m.StartSlopeBytesPerSecond, "endSlopeBytesPerSecond": m.EndSlopeBytesPerSecond,
				"latestSlopeBytesPerSecond": m.LatestSlopeBytesPerSecond}
		}
		containers = append(containers, entry)
	}
	return map[string]any{"pod": pod, "containers": containers, "signals": map[string]any{},
		"now": now.Format(time.RFC3339Nano), "policy": map[string]any{"name": "web", "namespace": "shop"}}
}
