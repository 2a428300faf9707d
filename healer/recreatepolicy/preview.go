package recreatepolicy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/healer/signals"
	"github.com/rejuv-dev/rejuv/policy"
)

// PreviewInput is what a preview of a policy reads: the objects of its
// namespace, as a pass of the controller reads them, and the time.
type PreviewInput struct {
	// Pods are the pods of the policy's namespace.
	Pods []corev1.Pod
	// Requests are the namespace's ContainerRecreateRequests.
	Requests []appsv1beta1.ContainerRecreateRequest
	// DisruptionBudgets are the namespace's PodDisruptionBudgets; nil when unknown,
	// and then no gate checks them.
	DisruptionBudgets []policyv1.PodDisruptionBudget
	Now               time.Time
	// Paused is why Rejuv is paused cluster-wide, "" when it is not (or
	// not known).
	Paused string

	// Memory is the working set history the memory rules read; nil for
	// none, NoMemory saying why.
	Memory   MemoryHistory
	NoMemory string
	// Signals evaluates the policy's signals; nil for none, NoSignals
	// saying why.
	Signals   SignalSource
	NoSignals string

	// InputOf names a pod whose input documents the preview keeps, rule
	// by rule, in Preview.Inputs.
	InputOf string
}

// Preview is what one pass of the policy would decide now. Nothing is
// created; the manager's own pass may differ where it knows more: how
// long a container has been seen not ready (estimated here from the pod's
// status), the working set it sampled, the signals its Prometheus
// answers.
type Preview struct {
	// Selected is how many running pods the selector chooses.
	Selected int
	// Pods are the selected pods whose containers the patterns name,
	// with what the rules said of each; none when the policy has no rules.
	Pods []PodPreview
	// Halted says why the rules match too many pods to act on, when they
	// do (limits.maxMatchingPercent).
	Halted string
	// Run is what a run (scheduled or requested) starting now would do
	// first; nil when the policy has neither schedule nor restartAt.
	Run []Decided
	// Inputs are the input documents each rule sees for the pod
	// PreviewInput.InputOf names, by rule.
	Inputs map[string]any
}

// PodPreview is what the rules said of one pod, and what came of it.
type PodPreview struct {
	Pod *corev1.Pod
	// Containers are the containers evaluated.
	Containers []string
	Rules      []RulePreview
	// Error is set when the pod's input could not be built.
	Error string
	// Decided is the decision on what the rules matched, nil when they
	// matched nothing.
	Decided *Decided
}

// RulePreview is one rule's verdict on one pod.
type RulePreview struct {
	Rule    string
	Matches []policy.Match
	// NoData are the signals the rule lacked for the pod.
	NoData []SignalNoData
	Error  string
}

// SignalNoData is a signal a rule lacked, and why when known.
type SignalNoData struct{ Signal, Reason string }

// Decided is a candidate's decision, with what every gate made of it.
type Decided struct {
	Decision v1alpha1.Decision
	Gates    []planner.GateCheck
}

// PreviewPolicy works out what a pass of the policy would decide now over
// in's objects, as the controller would: the same steps, read from in,
// judged, planned and rendered rather than acted on. Nothing is created.
func PreviewPolicy(ctx context.Context, p *v1alpha1.RecreatePolicy, in PreviewInput) (*Preview, error) {
	spec, errs := policyspec.Parse(&p.Spec)
	if len(errs) > 0 {
		return nil, fmt.Errorf("RecreatePolicy %s: %w", p.Name, errs.ToAggregate())
	}
	// The plan builds a status: on a copy.
	p = p.DeepCopy()
	read := planner.InputOf(p, spec, in.Pods, in.Requests, in.DisruptionBudgets, in.Now)
	read.Paused = in.Paused
	pl := planner.NewPlan(p, read, true)
	out := &Preview{Selected: len(read.Pods)}
	if len(spec.Rules) > 0 {
		if err := previewRules(ctx, p, pl, in, out); err != nil {
			return nil, err
		}
	}
	if spec.Schedule != nil || p.Spec.RestartAt != nil {
		run := &v1alpha1.Run{State: v1alpha1.RunRunning, ScheduledTime: metav1.NewTime(in.Now), Requested: spec.Schedule == nil, Baseline: planner.BaselineOf(read.Pods)}
		pl.CarryRun(run, map[types.UID]*appsv1beta1.ContainerRecreateRequest{}, true)
		out.Run = []Decided{}
		for _, e := range pl.Runs.Decisions {
			out.Run = append(out.Run, Decided{Decision: e.Decision, Gates: e.Gates})
		}
	}
	return out, nil
}

// previewRules judges the selected pods by the policy's rules and plans
// what comes of their verdicts, into out: each pod whose containers the
// patterns name with what the rules said and what was decided.
func previewRules(ctx context.Context, p *v1alpha1.RecreatePolicy, pl *planner.Plan, in PreviewInput, out *Preview) error {
	program, err := policy.NewEngine(policy.Options{}).Program(ctx, policy.Ref{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Generation: p.Generation}, pl.In.Spec.Rules)
	if err != nil {
		return fmt.Errorf("RecreatePolicy %s: %w", p.Name, err)
	}
	// It sees each pod once: the history is estimated from the pods.
	hist := &history{}
	for _, pod := range pl.In.Pods {
		hist.seed(pod)
	}
	var memory MemoryHistory = noMemory(in.NoMemory)
	if in.Memory != nil {
		memory = in.Memory
	}
	var sigs SignalSource = noSignals(in.NoSignals)
	if in.Signals != nil {
		sigs = in.Signals
	}
	j := newJudge(ctx, p, program, pl.In, hist, memory, sigs, 0)
	at := map[string]int{}
	v := j.all(ctx, pl.In.Pods, func(pod *corev1.Pod, pv podVerdict) {
		at[pod.Name] = len(out.Pods)
		out.Pods = append(out.Pods, podPreview(pod, pv))
	})
	for _, pod := range pl.In.Pods {
		if pod.Name == in.InputOf {
			if out.Inputs, err = inputs(program, j, pod); err != nil {
				return err
			}
		}
	}
	pl.Judged(&v.Verdicts)
	switch {
	case v.stopped != nil:
		out.Halted = stoppedMessage(v.stopped)
	case pl.Situation.Halted():
		out.Halted = pl.Situation.HaltMessage()
	}
	for _, e := range pl.Rules.Decisions {
		if pp := &out.Pods[at[e.Candidate.Pod.Name]]; e.Gated || pp.Decided == nil {
			pp.Decided = &Decided{Decision: e.Decision, Gates: e.Gates}
		}
	}
	return nil
}

// podPreview is what the rules said of one pod.
func podPreview(pod *corev1.Pod, v podVerdict) PodPreview {
	pp := PodPreview{Pod: pod, Containers: v.containers}
	if v.err != nil {
		pp.Error = v.err.Error()
	}
	for _, res := range v.results {
		rp := RulePreview{Rule: res.Rule, Matches: res.Matches}
		if res.Err != nil {
			rp.Error = res.Err.Error()
		}
		for _, nd := range v.noData {
			if nd.Rule == res.Rule {
				rp.NoData = append(rp.NoData, SignalNoData{Signal: nd.Signal, Reason: nd.Reason})
			}
		}
		pp.Rules = append(pp.Rules, rp)
	}
	return pp
}

// inputs are the input documents each rule of program sees for pod.
func inputs(program *policy.Program, j *judge, pod *corev1.Pod) (map[string]any, error) {
	var memory memoryNotes
	target := j.target(pod, j.spec.Containers.Matching(pod), &memory)
	out := map[string]any{}
	for _, rule := range program.Rules() {
		doc, err := program.Input(target, j.now, rule)
		if err != nil {
			return nil, err
		}
		out[rule] = doc
	}
	return out, nil
}

// noMemory is a memory history that has nothing, saying why.
type noMemory string

func (n noMemory) Memory(*corev1.Pod, string) (*policy.MemoryWindow, string) {
	return nil, string(n)
}

func (n noMemory) Describe() string { return "nothing" }

// noSignals is a signal source that answers nothing, saying why.
type noSignals string

func (n noSignals) Query(_ context.Context, _ string, list []v1alpha1.Signal, _ time.Time) *signals.Values {
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.Name
	}
	return signals.Unavailable(names, string(n))
}
