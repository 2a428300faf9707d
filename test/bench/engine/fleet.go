package engine

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/rules"
	"github.com/rejuv-dev/rejuv/rules/twins"
)

// BuiltinRule is a policy's rule: a built-in and its parameters.
type BuiltinRule struct {
	Name, Builtin string
	Params        map[string]any
}

// Leaks is the memory policy of a fleet in trouble: leaks, where half the
// pods match and each match builds its reason.
var Leaks = []BuiltinRule{
	{"leak", "memory-leak", map[string]any{"minObservation": "10m", "minSamples": 10}},
	{"near-limit", "memory-near-limit", map[string]any{"fraction": 0.9}},
}

// PolicyRules resolves the built-ins' parameters into the engine's rules.
func PolicyRules(builtins []BuiltinRule) ([]policy.Rule, error) {
	var out []policy.Rule
	for _, x := range builtins {
		r, ok := rules.Lookup(x.Builtin)
		if !ok {
			return nil, fmt.Errorf("no built-in rule %s", x.Builtin)
		}
		params, err := r.Resolve(x.Params)
		if err != nil {
			return nil, fmt.Errorf("rule %s (%s): %w", x.Name, x.Builtin, err)
		}
		out = append(out, policy.Rule{Name: x.Name, Builtin: r.Name, Module: r.Source, Parameters: params, Native: twins.Of(r, params)})
	}
	return out, nil
}

// Targets are the pods with what the manager knows of their containers,
// as sick as a real fleet: one pod in 49 has its first container not
// ready (for 0 to 19 minutes), one in 100 is near its memory limit; every
// container has a memory window. In trouble, every other pod's first
// container leaks steadily (r2 0.95, 30Mi an hour), and one in four of all
// has 470Mi (past 90% of policytest's pods' 512Mi limit). Every container
// of a pod but the first is calm.
func Targets(pods []*corev1.Pod, trouble bool, now time.Time) []policy.Target {
	out := make([]policy.Target, len(pods))
	for i, pod := range pods {
		var candidates []policy.ContainerCandidate
		for j, c := range restartable(pod) {
			if j > 0 {
				candidates = append(candidates, policy.ContainerCandidate{Name: c.Name, Memory: &policy.MemoryWindow{WorkingSetBytes: 40 << 20, Samples: 20, WindowSeconds: 600, R2: 0.1}})
				continue
			}
			first := policy.ContainerCandidate{Name: c.Name, Memory: &policy.MemoryWindow{
				WorkingSetBytes: workingSet(i), Samples: 20, WindowSeconds: 600, SlopeBytesPerSecond: float64(i % 50), R2: 0.5,
			}}
			if i%49 == 0 {
				first.NotReadySince = now.Add(-time.Duration(i%20) * time.Minute)
			}
			if trouble && i%2 == 0 {
				first.Memory = &policy.MemoryWindow{WorkingSetBytes: workingSet(i), Samples: 40, WindowSeconds: 1200, SlopeBytesPerSecond: 30 << 20 / 3600, R2: 0.95,
					StartSlopeBytesPerSecond: 30 << 20 / 3600, EndSlopeBytesPerSecond: 30 << 20 / 3600, LatestSlopeBytesPerSecond: 30 << 20 / 3600}
				if i%4 == 0 {
					first.Memory.WorkingSetBytes = 470 << 20
				}
			}
			candidates = append(candidates, first)
		}
		out[i] = policy.Target{Pod: pod, Containers: candidates}
	}
	return out
}

// restartable are the pod's containers and then its sidecars: the
// containers a policy may recreate.
func restartable(pod *corev1.Pod) []*corev1.Container {
	var out []*corev1.Container
	for i := range pod.Spec.Containers {
		out = append(out, &pod.Spec.Containers[i])
	}
	for i := range pod.Spec.InitContainers {
		if c := &pod.Spec.InitContainers[i]; apipods.IsSidecar(c) {
			out = append(out, c)
		}
	}
	return out
}

// MoveWindows is a sampling interval later: every container's memory
// window holds one sample more, a mebibyte higher.
func MoveWindows(targets []policy.Target) {
	for _, t := range targets {
		for i := range t.Containers {
			if m := t.Containers[i].Memory; m != nil {
				moved := *m
				moved.Samples++
				moved.WorkingSetBytes += 1 << 20
				t.Containers[i].Memory = &moved
			}
		}
	}
}

// workingSet is the first container's memory: every hundredth pod's 480Mi
// is near policytest's pods' 512Mi limit, the others' well below.
func workingSet(i int) int64 {
	if i%100 == 50 {
		return 480 << 20
	}
	return int64(200+i%250) << 20
}
