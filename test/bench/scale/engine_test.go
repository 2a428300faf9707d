package scale

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/test/bench/engine"
)

// engineRounds is how many sampled passes are measured at each size; the
// table gives the median.
const engineRounds = 3

// enginePass is the policy engine's steady state over a memory policy at
// one size: the pass when every container's memory window moved one
// sample and the pods did not change ("sampled", what every memory policy
// does at each sampling interval), next to OPA's prepared query fed JSON
// input over the same pods, measured in the same run, each on one core.
type enginePass struct {
	sampled, prepared engine.Measure
}

// ratio is how many times the prepared query's time a pod the sampled
// pass is as fast.
func (e enginePass) ratio() float64 {
	return e.sampled.PerSecond() / e.prepared.PerSecond()
}

// projectedCores is the CPU the sampled pass would take over pods pods
// every interval.
func (e enginePass) projectedCores(pods int, interval time.Duration) float64 {
	return e.sampled.PerPod().Seconds() * float64(pods) / interval.Seconds()
}

// measureEngine evaluates the benchmark engine's memory policy (memory-leak
// and memory-near-limit, half the pods leaking) in the manager's engine
// over the fleet's pods as the API server has them, trimmed as the
// manager's cache keeps them, with memory windows made up for their
// containers (simulated pods have none). The prepared query is fed the
// same pods whole, as a simple implementation would hold them (but their
// managedFields), as test/bench/engine feeds it.
func measureEngine(ctx context.Context) (enginePass, error) {
	var out enginePass
	list, err := stack.Kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: fleetLabel + "=" + fleetValue})
	if err != nil {
		return out, fmt.Errorf("list the fleet's pods: %w", err)
	}
	var pods, whole []*corev1.Pod
	for i := range list.Items {
		if p := &list.Items[i]; isFleetNamespace(p.Namespace) && p.Status.Phase == corev1.PodRunning {
			pods, whole = append(pods, apipods.Trim(p)), append(whole, p)
		}
	}
	if len(pods) == 0 {
		return out, fmt.Errorf("no running pod in the fleet's namespaces")
	}
	rules, err := engine.PolicyRules(engine.Leaks)
	if err != nil {
		return out, err
	}
	now := time.Now()
	targets, wholeTargets := engine.Targets(pods, true, now), engine.Targets(whole, true, now)
	program, err := policy.NewEngine(policy.Options{Deadline: time.Second}).
		Program(ctx, policy.Ref{Namespace: "scale", Name: "leaks", Generation: 1}, rules)
	if err != nil {
		return out, fmt.Errorf("compile the memory policy: %w", err)
	}
	var evalErr error
	evaluate := func(i int) int {
		res, err := program.Evaluate(ctx, targets[i], now)
		n, ruleErr := engine.Matches(res)
		if err == nil {
			err = ruleErr
		}
		if err != nil && evalErr == nil {
			evalErr = fmt.Errorf("evaluate pod %s/%s: %w", targets[i].Pod.Namespace, targets[i].Pod.Name, err)
		}
		return n
	}
	prepared, err := engine.PreparedJSON(rules, now)
	if err != nil {
		return out, err
	}
	queried := func(i int) int {
		n, err := prepared(wholeTargets[i])
		if err != nil && evalErr == nil {
			evalErr = err
		}
		return n
	}
	// First sight and a warm pass: the documents the manager keeps.
	engine.Run(len(targets), evaluate)
	engine.Run(len(targets), evaluate)
	var sampleds, prepareds []engine.Measure
	for range engineRounds {
		engine.MoveWindows(targets)
		engine.MoveWindows(wholeTargets)
		sampleds = append(sampleds, engine.Run(len(targets), evaluate))
		prepareds = append(prepareds, engine.Run(min(engine.PreparedSample, len(targets)), queried))
	}
	if evalErr != nil {
		return out, evalErr
	}
	// Both ways judge the sample alike.
	last := prepareds[len(prepareds)-1]
	if hits := engine.Run(last.Pods, evaluate).Hits; hits != last.Hits {
		return out, fmt.Errorf("the prepared query found %d matches over %d pods, the engine %d", last.Hits, last.Pods, hits)
	}
	out.sampled, out.prepared = engine.Median(sampleds), engine.Median(prepareds)
	return out, nil
}
