package recreatepolicy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
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
// in's objects, as the controller would, and creates nothing.
func PreviewPolicy(ctx context.Context, p *v1alpha1.RecreatePolicy, in PreviewInput) (*Preview, error) {
	spec, errs := policyspec.Parse(&p.Spec)
	if len(errs) > 0 {
		return nil, fmt.Errorf("RecreatePolicy %s: %w", p.Name, errs.ToAggregate())
	}
	now := in.Now
	engine := policy.NewEngine(policy.Options{Clock: func() time.Time { return now }})
	r := &Reconciler{Engine: engine, Memory: in.Memory, Signals: in.Signals}
	if r.Memory == nil {
		r.Memory = noMemory(in.NoMemory)
	}
	if r.Signals == nil {
		r.Signals = noSignals(in.NoSignals)
	}
	byName := make(map[string]*corev1.Pod, len(in.Pods))
	var pods []*corev1.Pod
	for i := range in.Pods {
		pod := &in.Pods[i]
		byName[pod.Name] = pod
		if apipods.Running(pod) && spec.Selector.Matches(labels.Set(pod.Labels)) {
			pods = append(pods, pod)
		}
	}
	facts := gatherRequests(p.Name, in.Requests, byName, now)
	s := newSituation(p, spec, pods, facts, now)
	if respectsDisruptionBudgets(p) && in.DisruptionBudgets != nil {
		s.Disruption = disruptionCheck(in.DisruptionBudgets, in.Pods, facts.inFlight)
	}
	out := &Preview{Selected: len(pods)}

	if len(spec.Rules) > 0 {
		program, err := engine.Program(ctx, policy.Ref{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Generation: p.Generation}, spec.Rules)
		if err != nil {
			return nil, fmt.Errorf("RecreatePolicy %s: %w", p.Name, err)
		}
		hist := &history{}
		for _, pod := range pods {
			hist.seed(pod)
		}
		j := r.judge(ctx, p, program, spec, facts, hist, now)
		var candidates []*planner.PodCandidate
		var at []int
		for _, pod := range pods {
			if pod.Name == in.InputOf {
				if out.Inputs, err = inputs(program, j, pod); err != nil {
					return nil, err
				}
			}
			v, ok := j.pod(ctx, pod)
			if !ok {
				continue
			}
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
			if v.unrestartable != nil && v.candidate == nil {
				pp.Decided = &Decided{Decision: candidateDecision(v.unrestartable, v1alpha1.OutcomeSkipped, unrestartableMessage(pod, v.unrestartable.Containers), now)}
			}
			if v.candidate != nil {
				candidates = append(candidates, v.candidate)
				at = append(at, len(out.Pods))
			}
			out.Pods = append(out.Pods, pp)
		}
		s.Matching = len(candidates)
		if s.Halted() {
			out.Halted = s.HaltMessage()
		}
		for i, c := range candidates {
			out.Pods[at[i]].Decided = decidePreview(s, c, now)
		}
	}

	if spec.Schedule != nil || p.Spec.RestartAt != nil {
		run := planner.Trigger{Kind: planner.TriggerSchedule, Run: now, Requested: spec.Schedule == nil}
		prog := progress(run, pods, spec.Containers, map[types.UID]*appsv1beta1.ContainerRecreateRequest{}, baselineOf(pods))
		out.Run = []Decided{}
		for _, c := range prog.leftAlone {
			out.Run = append(out.Run, Decided{Decision: candidateDecision(c, v1alpha1.OutcomeSkipped, unrestartableMessage(c.Pod, c.Containers), now)})
		}
		for _, c := range prog.pending {
			out.Run = append(out.Run, *decidePreview(s, c, now))
		}
	}
	return out, nil
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

// decidePreview is what the gates make of c, each of them and in order,
// counting it against the limits when it gets through as a pass would.
func decidePreview(s *planner.Situation, c *planner.PodCandidate, now time.Time) *Decided {
	gates := s.Check(c)
	v := s.Admit(c)
	return &Decided{
		Decision: v1alpha1.Decision{
			Time: metav1.NewTime(now), Pod: c.Pod.Name, Containers: c.Containers,
			Trigger: c.Trigger.String(), Outcome: v.Outcome, Reason: c.Reason, Message: v.Message,
		},
		Gates: gates,
	}
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
