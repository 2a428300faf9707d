package recreatepolicy

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy"
)

// Reconciler is the policy controller.
type Reconciler struct {
	Client client.Client
	// Reader reads from the API server rather than the cache, to retry a
	// status write that was made from a stale copy.
	Reader   client.Reader
	Engine   *policy.Engine
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Requests is the version the requests are created and read in
	// (default v1beta1).
	Requests RequestVersion

	// Workers is how many policies are reconciled at once (default 1).
	Workers int
	// EvaluationBudget bounds how long one pass may evaluate a policy's
	// rules over its pods (default DefaultEvaluationBudget); a policy over
	// it halts.
	EvaluationBudget time.Duration
	// Memory is the working set history the memory rules read; nil when
	// the manager samples no memory source.
	Memory MemoryHistory
	// Signals evaluates policies' signals; nil when the manager has no
	// Prometheus.
	Signals SignalSource
	// Journal holds the evaluations that ran past their bounds in a step
	// the sandbox could not stop; their policies are quarantined when the
	// manager starts, before any policy is reconciled. None when nil.
	Journal *policy.Journal

	// journaled is closed once the journal was read at the start;
	// interrupted are the policies it quarantined, by UID.
	journaled   chan struct{}
	interrupted map[types.UID]interruption
	// passes cancels the pass of a policy changed or deleted meanwhile.
	passes passes

	mu         sync.Mutex
	histories  map[types.NamespacedName]*history
	expected   expectations
	statuses   statusWrites
	dropped    droppedCharges
	namespaces namespaceLocks
	holds      map[types.NamespacedName]holds
}

// +kubebuilder:rbac:groups=rejuv.dev,resources=recreatepolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=rejuv.dev,resources=recreatepolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one policy up to date: it checks the spec, fires the
// schedule, evaluates the rules, creates what the gates let through and
// writes the status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	if r.journaled != nil {
		select {
		case <-r.journaled:
		case <-ctx.Done():
			return ctrl.Result{}, ctx.Err()
		}
	}
	p := &v1alpha1.RecreatePolicy{}
	if err := r.Client.Get(ctx, req.NamespacedName, p); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			r.releaseDropped(ctx, req.Namespace)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("read RecreatePolicy %s: %w", req, err)
	}
	if p.DeletionTimestamp != nil {
		return ctrl.Result{}, nil
	}
	now := r.Clock.Now()
	original := p.DeepCopy()
	p.Status.ObservedGeneration = p.Generation
	r.keepInterruption(p)

	spec, program, ok := r.check(ctx, p)
	if !ok || spec.Schedule == nil {
		// No run is coming: a time left from an earlier spec would say
		// one is overdue.
		nextRun.DeleteLabelValues(p.Name, p.Namespace)
	}
	if !ok {
		if !r.statuses.needed(original, p, 0, now) {
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, r.writeStatus(ctx, original, p)
	}

	pods, byName, err := r.selectPods(ctx, p, spec)
	if err != nil {
		return ctrl.Result{}, err
	}

	// Rules first, outside the namespace's lock: they are the costly part.
	var v *ruleVerdicts
	if program != nil && !r.quarantined(p) {
		facts, err := r.requestFacts(ctx, p, byName, now)
		if err != nil {
			return ctrl.Result{}, err
		}
		hist := r.history(req.NamespacedName, pods)
		passCtx, done := r.passes.start(ctx, p.UID, p.Generation)
		evaluated := r.evaluate(passCtx, p, program, spec, pods, facts, hist, now)
		cancelled := passCtx.Err() != nil && ctx.Err() == nil
		done()
		if cancelled {
			// Its next generation is reconciled next, or it is gone.
			log.V(1).Info("pass cancelled: the policy changed or was deleted while its rules ran", "evaluated", evaluated.evaluated)
			return ctrl.Result{}, nil
		}
		v = &evaluated
	}

	// Then the decisions, one policy of the namespace at a time, from the
	// requests as they are now: another policy may have created some while
	// these rules ran.
	unlock := r.namespaces.lock(p.Namespace)
	defer unlock()
	facts, err := r.requestFacts(ctx, p, byName, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	situation, pdbs, err := r.situation(ctx, p, spec, pods, facts, now)
	if err != nil {
		return ctrl.Result{}, err
	}

	d := decider{r: r, p: p, now: now, pdbs: pdbs}
	var requeue time.Duration
	evalFailures := ""

	// Rule decisions first: they heal pods that are in trouble now.
	if v != nil {
		p.Status.LastEvaluationTime = &metav1.Time{Time: now}
		p.Status.NoData = v.noData
		observeNoData(p, v.noData)
		r.reportEvaluation(p, *v)
		evalFailures = v.failureText()
		switch {
		case v.stopped != nil:
			r.halt(p, v1alpha1.ReasonRuleStopped, stoppedMessage(v.stopped))
		case v.overBudget != nil:
			r.halt(p, v1alpha1.ReasonEvaluationBudget, v.overBudget.message(len(pods), r.evaluationBudget()))
		default:
			for _, reason := range ruleHalts {
				r.unhaltFor(p, reason)
			}
			situation.Matching = len(v.candidates)
			if situation.Halted() {
				r.halt(p, v1alpha1.ReasonBlastRadius, situation.HaltMessage())
			} else {
				r.unhaltFor(p, v1alpha1.ReasonBlastRadius)
			}
			if err := d.decideAll(ctx, situation, v.candidates); err != nil {
				return ctrl.Result{}, err
			}
			r.reportRecurring(p, d.decisions)
			for _, c := range v.unrestartable {
				d.skipped(c, unrestartableMessage(c.Pod, c.Containers))
			}
			requeue = spec.EvaluationInterval
		}
	}

	next, err := r.runs(ctx, p, spec, pods, facts, situation, &d, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if next > 0 && (requeue == 0 || next < requeue) {
		requeue = next
	}
	unlock()

	r.finishStatus(p, facts, situation, len(pods), evalFailures)
	decided := d.decisions
	if program == nil {
		observeNoData(p, nil)
	}
	rulesDecided := program == nil || (v != nil && v.overBudget == nil && v.stopped == nil)
	r.observePass(req.NamespacedName, p, decided, rulesDecided, now)
	d.flush(p)
	if !r.statuses.needed(original, p, spec.EvaluationInterval, now) {
		log.V(1).Info("policy reconciled, status unchanged", "selected", len(pods), "requeueAfter", requeue)
		return ctrl.Result{RequeueAfter: requeue}, nil
	}
	if err := r.writeStatus(ctx, original, p); apierrors.IsConflict(err) {
		// Our previous write is newer than the cached copy this status was
		// computed from: write it again on top of that write, keeping its
		// decisions below ours.
		latest := &v1alpha1.RecreatePolicy{}
		if err := r.Reader.Get(ctx, req.NamespacedName, latest); err != nil {
			return ctrl.Result{}, fmt.Errorf("read RecreatePolicy %s again: %w", req, err)
		}
		retry := latest.DeepCopy()
		retry.Status = p.Status
		retry.Status.RecentDecisions = latest.Status.RecentDecisions
		d.decisions = decided
		d.flush(retry)
		if err := r.writeStatus(ctx, latest, retry); err != nil {
			return ctrl.Result{}, err
		}
	} else if err != nil {
		return ctrl.Result{}, err
	}
	log.V(1).Info("policy reconciled", "selected", len(pods), "requeueAfter", requeue)
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// requestFacts reads the namespace's requests, with those created but not
// yet in the cache, and sums up what they say of the policy's pods.
func (r *Reconciler) requestFacts(ctx context.Context, p *v1alpha1.RecreatePolicy, byName map[string]*corev1.Pod, now time.Time) (*requestFacts, error) {
	crrs, err := r.Requests.list(ctx, r.Client, p.Namespace)
	if err != nil {
		return nil, err
	}
	crrs = r.expected.merge(p.Namespace, crrs, now)
	return gatherRequests(p.Name, crrs, byName, now), nil
}

// check parses the spec and compiles the rules, setting the conditions
// that say how that went. ok is false when the policy cannot act.
func (r *Reconciler) check(ctx context.Context, p *v1alpha1.RecreatePolicy) (*policyspec.Spec, *policy.Program, bool) {
	spec, errs := policyspec.Parse(&p.Spec)
	if len(errs) > 0 {
		scheduleErr, otherErr := false, false
		for _, e := range errs {
			if isScheduleField(e.Field) {
				scheduleErr = true
			} else {
				otherErr = true
			}
		}
		msg := errs.ToAggregate().Error()
		if scheduleErr {
			r.setCondition(p, v1alpha1.ConditionScheduleValid, false, v1alpha1.ReasonInvalidSchedule, msg)
		}
		if otherErr {
			r.setCondition(p, v1alpha1.ConditionRulesCompiled, false, v1alpha1.ReasonInvalidParameters, msg)
		}
		r.setCondition(p, v1alpha1.ConditionReady, false, v1alpha1.ReasonInvalidSpec, msg)
		return nil, nil, false
	}
	if spec.Schedule != nil {
		r.setCondition(p, v1alpha1.ConditionScheduleValid, true, v1alpha1.ReasonScheduleParsed, "")
	} else {
		r.setCondition(p, v1alpha1.ConditionScheduleValid, true, v1alpha1.ReasonNoSchedule, "")
	}
	var program *policy.Program
	if len(spec.Rules) > 0 {
		var err error
		program, err = r.Engine.Program(ctx, policy.Ref{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Generation: p.Generation}, spec.Rules)
		if err != nil {
			r.setCondition(p, v1alpha1.ConditionRulesCompiled, false, v1alpha1.ReasonCompileError, err.Error())
			r.setCondition(p, v1alpha1.ConditionReady, false, v1alpha1.ReasonCompileError, err.Error())
			return nil, nil, false
		}
		r.setCondition(p, v1alpha1.ConditionRulesCompiled, true, v1alpha1.ReasonCompiled, "")
	} else {
		r.setCondition(p, v1alpha1.ConditionRulesCompiled, true, v1alpha1.ReasonNoRules, "")
	}
	return spec, program, true
}

func isScheduleField(f string) bool {
	return strings.HasPrefix(f, "spec.schedule") || strings.HasPrefix(f, "spec.windows")
}

// selectPods lists the running pods the selector matches, and every pod of
// the namespace by name (for requests without a pod UID label).
func (r *Reconciler) selectPods(ctx context.Context, p *v1alpha1.RecreatePolicy, spec *policyspec.Spec) ([]*corev1.Pod, map[string]*corev1.Pod, error) {
	list := &corev1.PodList{}
	// The cache's own pods, not copies: a pass only reads them, and
	// copying every pod of the namespace each pass is most of its garbage.
	if err := r.Client.List(ctx, list, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, nil, fmt.Errorf("list the pods of namespace %s: %w", p.Namespace, err)
	}
	byName := make(map[string]*corev1.Pod, len(list.Items))
	var pods []*corev1.Pod
	for i := range list.Items {
		pod := &list.Items[i]
		byName[pod.Name] = pod
		if !apipods.Running(pod) {
			continue
		}
		if spec.Selector.Matches(labels.Set(pod.Labels)) {
			pods = append(pods, pod)
		}
	}
	return pods, byName, nil
}

// newSituation is what the gates know of the policy's pods from its
// requests, before the PodDisruptionBudgets are read.
func newSituation(p *v1alpha1.RecreatePolicy, spec *policyspec.Spec, pods []*corev1.Pod, facts *requestFacts, now time.Time) *planner.Situation {
	s := &planner.Situation{
		Now: now, Suspended: p.Spec.Suspend, DryRun: p.Spec.DryRun, Windows: spec.Windows,
		InFlight: facts.inFlight, LastRecreated: facts.lastRecreated, Cooldown: spec.Cooldown,
		LastRule: facts.lastRule, MemoryRules: spec.MemoryRules, MemoryRecurrence: spec.MemoryRecurrence,
		CreatedLastHour: facts.createdLastHour, MaxPerHour: p.Spec.Limits.MaxPerHour,
		Selected: len(pods), MaxMatchingPercent: spec.MaxMatchingPercent, MinMatchingToHalt: spec.MinMatchingToHalt,
		MaxUnavailable: spec.MaxUnavailable.Of(len(pods)),
	}
	for _, pod := range pods {
		if !apipods.Ready(pod) || facts.inFlight[pod.UID] {
			s.Unavailable++
		}
	}
	return s
}

// respectsDisruptionBudgets says whether the policy holds recreations back for
// PodDisruptionBudgets (the default).
func respectsDisruptionBudgets(p *v1alpha1.RecreatePolicy) bool {
	respect := p.Spec.Rollout.RespectPodDisruptionBudgets
	return respect == nil || *respect
}

// situation gathers what the gates need.
func (r *Reconciler) situation(ctx context.Context, p *v1alpha1.RecreatePolicy, spec *policyspec.Spec, pods []*corev1.Pod, facts *requestFacts, now time.Time) (*planner.Situation, []policyv1.PodDisruptionBudget, error) {
	s := newSituation(p, spec, pods, facts, now)
	if respectsDisruptionBudgets(p) {
		pdbs := &policyv1.PodDisruptionBudgetList{}
		if err := r.Client.List(ctx, pdbs, client.InNamespace(p.Namespace)); err != nil {
			return nil, nil, fmt.Errorf("list the PodDisruptionBudgets of namespace %s: %w", p.Namespace, err)
		}
		namespacePods := &corev1.PodList{}
		if len(pdbs.Items) > 0 {
			// An eviction by someone else spends its budget in the
			// budget's status at once, before its pod is deleted: read
			// the budgets from the API server, as the cache may not show
			// that yet, nor the pod's deletion. (The cache's list above
			// spares that read in namespaces without budgets.)
			if err := r.Reader.List(ctx, pdbs, client.InNamespace(p.Namespace)); err != nil {
				return nil, nil, fmt.Errorf("read the PodDisruptionBudgets of namespace %s: %w", p.Namespace, err)
			}
			if err := r.Client.List(ctx, namespacePods, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
				return nil, nil, fmt.Errorf("list the pods of namespace %s: %w", p.Namespace, err)
			}
			r.releaseCompleted(ctx, pdbs.Items, facts.completedCharges)
			r.releaseCompleted(ctx, pdbs.Items, r.dropped.take(p.Namespace))
		}
		s.Disruption = disruptionCheck(pdbs.Items, namespacePods.Items, facts.inFlight)
		return s, pdbs.Items, nil
	}
	return s, nil, nil
}

// history is the policy's memory of its containers, kept to its pods.
func (r *Reconciler) history(key types.NamespacedName, pods []*corev1.Pod) *history {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.histories == nil {
		r.histories = map[types.NamespacedName]*history{}
	}
	h := r.histories[key]
	if h == nil {
		h = &history{}
		r.histories[key] = h
	}
	keep := make(map[types.UID]bool, len(pods))
	for _, pod := range pods {
		keep[pod.UID] = true
	}
	h.forget(keep)
	return h
}

// observePass sets the metrics of one pass's decisions and the policy's
// halt; rulesDecided is false when the pass did not evaluate the rules it
// has, so that their candidates' holds go on.
func (r *Reconciler) observePass(key types.NamespacedName, p *v1alpha1.RecreatePolicy, decided []v1alpha1.Decision, rulesDecided bool, now time.Time) {
	observeDecisions(p, decided)
	observeHalted(p)
	r.mu.Lock()
	if r.holds == nil {
		r.holds = map[types.NamespacedName]holds{}
	}
	h := r.holds[key]
	if h == nil {
		h = holds{}
		r.holds[key] = h
	}
	ended := h.update(decided, func(kind planner.TriggerKind) bool { return kind == planner.TriggerSchedule || rulesDecided }, now)
	r.mu.Unlock()
	observeHolds(p, ended)
}

func (r *Reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	delete(r.holds, key)
	delete(r.histories, key)
	r.mu.Unlock()
	r.Engine.Forget(key.Namespace, key.Name)
	r.expected.forget(key)
	r.statuses.forget(key)
	forgetMetrics(key.Namespace, key.Name)
}

// writeStatus patches the status once, against the object as read. The
// patch carries the resourceVersion read, so a status computed from a stale
// copy (the cache behind the previous reconcile's write) is refused rather
// than overwriting that write's decisions and run.
func (r *Reconciler) writeStatus(ctx context.Context, original, p *v1alpha1.RecreatePolicy) error {
	err := r.Client.Status().Patch(ctx, p, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{}))
	switch {
	case err == nil:
		r.statuses.wrote(p)
		return nil
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return err
	}
	return fmt.Errorf("write the status of RecreatePolicy %s/%s: %w", p.Namespace, p.Name, err)
}
