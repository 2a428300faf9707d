package policy

import (
	"context"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/policy/policytest"
)

func TestReadPodPaths(t *testing.T) {
	cases := map[string]struct {
		body string
		want string
	}{
		"containers only":   {`recreate contains c.name if { some c in input.containers; not c.ready }`, "{}"},
		"one field":         {`recreate contains c.name if { some c in input.containers; input.pod.metadata.uid == "x" }`, "{metadata:{uid:*,},}"},
		"key by variable":   {`recreate contains c.name if { some c in input.containers; some k; input.pod.metadata.labels[k] == "x" }`, "{metadata:{labels:*,},}"},
		"list index":        {`recreate contains c.name if { some c in input.containers; input.pod.spec.containers[0].image == "x" }`, "{spec:{containers:*,},}"},
		"two paths merge":   {`recreate contains c.name if { some c in input.containers; input.pod.metadata.uid == input.pod.metadata.name; input.pod.status.phase == "Running" }`, "{metadata:{name:*,uid:*,},status:{phase:*,},}"},
		"whole pod":         {`recreate contains c.name if { some c in input.containers; p := input.pod; p.metadata.uid == "x" }`, "*"},
		"pod in a function": {`recreate contains c.name if { some c in input.containers; object.get(input.pod, "x", 1) == 1 }`, "*"},
		"whole input":       {`recreate contains c.name if { some c in input.containers; print(input) }`, "*"},
		"input by variable": {`recreate contains c.name if { some c in input.containers; some k; input[k] == 1 }`, "*"},
		"pod by import":     {"import input.pod.metadata as m\nrecreate contains c.name if { some c in input.containers; m.uid == \"x\" }", "{metadata:*,}"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := ast.ParseModuleWithOpts("x.rego", "package x\nimport rego.v1\n"+tc.body+"\n", ast.ParserOptions{RegoVersion: ast.RegoV1})
			if err != nil {
				t.Fatal(err)
			}
			if got := readPodPaths([]*ast.Module{m}).key(); got != tc.want {
				t.Errorf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestPrunedPodIsPartOfTheFullOne(t *testing.T) {
	pod := policytest.Pod(11, time.Now())
	m, err := ast.ParseModuleWithOpts("x.rego", `package x
import rego.v1
recreate contains c.name if {
	some c in input.containers
	input.pod.metadata.labels.app == "web"
	input.pod.status.containerStatuses[0].lastState.terminated.reason == "OOMKilled"
	input.pod.spec.nodeName == "node-1"
	input.pod.metadata.nothing == 1
}
`, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	paths := readPodPaths([]*ast.Module{m})
	term, err := newPodShape(paths).convert(pod)
	if err != nil {
		t.Fatal(err)
	}
	pruned := term.Value
	// Of the pod as the manager keeps it: a whole part read is trimmed.
	full, err := ToValue(pods.Trim(pod))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"metadata.labels.app", "status.containerStatuses", "spec.nodeName"} {
		ref := ast.MustParseRef("x." + path)[1:]
		want, err := full.Find(ref)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pruned.Find(ref)
		if err != nil || got.Compare(want) != 0 {
			t.Errorf("%s: got %v (%v), want %v", path, got, err, want)
		}
	}
	if _, err := pruned.Find(ast.MustParseRef("x.metadata.name")[1:]); err == nil {
		t.Error("metadata.name is converted though no rule reads it")
	}
	if _, err := pruned.Find(ast.MustParseRef("x.spec.containers")[1:]); err == nil {
		t.Error("spec.containers is converted though no rule reads it")
	}
}

func TestTheWholePodIsThePodAsTheManagerKeepsIt(t *testing.T) {
	pod := policytest.Pod(11, time.Now())
	if len(pod.Spec.Volumes) == 0 || pod.Status.ContainerStatuses[0].ImageID == "" {
		t.Fatal("premise: the test pod has volumes and fields Trim drops")
	}
	m, err := ast.ParseModuleWithOpts("x.rego", "package x\nrecreate contains c.name if { some c in input.containers; p := input.pod; p.x }\n", ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	got, err := newPodShape(readPodPaths([]*ast.Module{m})).convert(pod)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ToValue(pods.Trim(pod))
	if err != nil {
		t.Fatal(err)
	}
	if got.Value.Compare(want) != 0 {
		t.Errorf("input.pod is\n%v\nwant the trimmed pod\n%v", got, want)
	}
	if _, err := got.Value.Find(ast.MustParseRef("x.spec.volumes")[1:]); err == nil {
		t.Error("input.pod holds spec.volumes, which the manager does not keep")
	}
}

func TestPoliciesOfDifferentShapesShareThePodCache(t *testing.T) {
	ctx := context.Background()
	e := NewEngine(Options{})
	byLabel := `package x
import rego.v1
recreate contains c.name if { some c in input.containers; input.pod.metadata.labels.tier == "frontend" }
`
	byWhole := `package y
import rego.v1
recreate contains c.name if { some c in input.containers; p := input.pod; p.spec.nodeName == "node-003" }
`
	a, err := e.Program(ctx, Ref{Namespace: "shop", Name: "a"}, []Rule{{Name: "label", Module: byLabel}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.Program(ctx, Ref{Namespace: "shop", Name: "b"}, []Rule{{Name: "whole", Module: byWhole}})
	if err != nil {
		t.Fatal(err)
	}
	target := Target{Pod: policytest.Pod(3, time.Now()), Containers: []ContainerCandidate{{Name: "app"}}}
	for _, p := range []*Program{a, b, a, b} {
		res, err := p.Evaluate(ctx, target, time.Now())
		if err != nil || res[0].Err != nil || len(res[0].Matches) != 1 {
			t.Fatalf("policy %s: %v %+v", p.Policy(), err, res)
		}
	}
	if n := e.Pods().Len(); n != 1 {
		t.Errorf("pod cache holds %d entries, want 1", n)
	}
}
