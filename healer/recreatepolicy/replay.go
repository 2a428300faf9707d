package recreatepolicy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy"
)

// Replay plays a policy's rules over recorded pods pass by pass, as the
// controller would, without a cluster: the backtest's core. Each pass
// judges the pods it is given by the same judge and plans by the same
// gates (windows, cooldown, memoryRecurrence, maxPerHour, blast radius,
// maxUnavailable) as the controller's pass; what it admits becomes a
// request it keeps (and forgets after the request's TTL, as the API
// server would), completed at once, so that the next passes count it as
// the controller counts its own requests. The policy is replayed as if
// it were neither suspended nor in dry run: the question is what it
// would do. PodDisruptionBudgets, signals (spec.signals) and the
// emergency stop are not replayed. A Replay is not safe for concurrent
// use.
type Replay struct {
	p       *v1alpha1.RecreatePolicy
	spec    *policyspec.Spec
	program *policy.Program
	hist    *history
	// requests are the requests the replay made, oldest first; ttl is how
	// long each is kept after it completed.
	requests []appsv1beta1.ContainerRecreateRequest
	ttl      time.Duration
	made     int
}

// ReplayPass is what one pass of a Replay decided.
type ReplayPass struct {
	// Decisions are the decisions on the rules' candidates, in order: an
	// admitted one has the outcome Created.
	Decisions []v1alpha1.Decision
	// Halted says why the pass halted the policy's rule-triggered work
	// (the blast radius), "" when it did not.
	Halted string
	// NoData are the signals the rules lacked, by rule and signal.
	NoData []v1alpha1.RuleNoData
	// Failures say which rules failed, and why.
	Failures string
}

// NewReplay compiles p's rules in engine for a replay. p is copied.
func NewReplay(ctx context.Context, p *v1alpha1.RecreatePolicy, engine *policy.Engine) (*Replay, error) {
	p = p.DeepCopy()
	p.Spec.Suspend, p.Spec.DryRun = false, false
	p.Status = v1alpha1.RecreatePolicyStatus{}
	if p.UID == "" {
		p.UID = types.UID("replay-" + p.Namespace + "-" + p.Name)
	}
	spec, errs := policyspec.Parse(&p.Spec)
	if len(errs) > 0 {
		return nil, fmt.Errorf("RecreatePolicy %s/%s: %w", p.Namespace, p.Name, errs.ToAggregate())
	}
	if len(spec.Rules) == 0 {
		return nil, fmt.Errorf("RecreatePolicy %s/%s has no rules to replay", p.Namespace, p.Name)
	}
	program, err := engine.Program(ctx, policy.Ref{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Generation: p.Generation}, spec.Rules)
	if err != nil {
		return nil, fmt.Errorf("RecreatePolicy %s/%s: %w", p.Namespace, p.Name, err)
	}
	r := &Replay{p: p, spec: spec, program: program, hist: &history{}}
	if keep := planner.Request(p, &planner.PodCandidate{Pod: &corev1.Pod{}}).Spec.TTLSecondsAfterFinished; keep != nil {
		r.ttl = time.Duration(*keep) * time.Second
	}
	return r, nil
}

// EvaluationInterval is the policy's spec.evaluationInterval: the time
// between the controller's passes.
func (r *Replay) EvaluationInterval() time.Duration { return r.spec.EvaluationInterval }

// Selects reports whether the policy's selector chooses a pod so labelled.
func (r *Replay) Selects(podLabels map[string]string) bool {
	return policyspec.Selects(r.p, podLabels)
}

// Pass is a pass of the policy at now over pods (their status as it was
// then), with the containers' working set windows from memory. The
// requests of the candidates it admits are made (and complete) at now.
func (r *Replay) Pass(ctx context.Context, now time.Time, pods []corev1.Pod, memory MemoryHistory) ReplayPass {
	r.forget(now)
	in := planner.InputOf(r.p, r.spec, pods, r.requests, nil, now)
	pl := planner.NewPlan(r.p, in, false)
	j := newJudge(ctx, r.p, r.program, in, r.hist, memory, noSignals(noSignalsReplayed), 0)
	v := j.all(ctx, in.Pods, nil)
	pl.Judged(&v.Verdicts)
	out := ReplayPass{NoData: v.NoData, Failures: v.failureText()}
	if pl.Situation.Halted() {
		out.Halted = pl.Situation.HaltMessage()
	}
	if v.stopped != nil {
		out.Halted = stoppedMessage(v.stopped)
	}
	for i := range pl.Rules.Decisions {
		e := &pl.Rules.Decisions[i]
		if e.Admitted() {
			e.Decision.Request = r.keepRequest(pl, e.Candidate, now)
		}
		out.Decisions = append(out.Decisions, e.Decision)
	}
	return out
}

// noSignalsReplayed is why a replay's rules have no spec.signals.
const noSignalsReplayed = "a replay does not query spec.signals"

// keepRequest keeps the request of an admitted candidate, completed at now, and
// returns its name.
func (r *Replay) keepRequest(pl *planner.Plan, c *planner.PodCandidate, now time.Time) string {
	c.Attempt = pl.In.Facts.Attempt(r.p, c)
	crr := planner.Request(r.p, c)
	r.made++
	crr.UID = types.UID(fmt.Sprintf("replay-%d", r.made))
	crr.CreationTimestamp = metav1.NewTime(now)
	crr.Labels[appsv1beta1.PodUIDLabel] = string(c.Pod.UID)
	crr.Status.Phase, crr.Status.Result = appsv1beta1.PhaseCompleted, appsv1beta1.ResultSucceeded
	crr.Status.CompletionTime = &metav1.Time{Time: now}
	r.requests = append(r.requests, *crr)
	return crr.Name
}

// forget drops the requests whose TTL ended before now, as the API server
// would delete them.
func (r *Replay) forget(now time.Time) {
	if r.ttl <= 0 {
		return
	}
	n := 0
	for n < len(r.requests) && now.Sub(r.requests[n].Status.CompletionTime.Time) >= r.ttl {
		n++
	}
	r.requests = r.requests[n:]
}
