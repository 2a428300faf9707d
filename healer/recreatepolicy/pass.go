package recreatepolicy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy"
)

// +kubebuilder:rbac:groups=rejuv.dev,resources=recreatepolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=rejuv.dev,resources=recreatepolicies/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=get;list;watch;create
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get;list;watch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// Reconcile brings one policy up to date, in the steps of a pass: read
// the pods and requests, judge them by the rules (outside the namespace's
// lock), then under it read what the gates need, plan the decisions and
// act on them, and write the status once.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	endPass, ok := r.state.startNamespacePass(req.Namespace, r.passesPerNamespace())
	if !ok {
		passesDeferred.WithLabelValues(req.Name, req.Namespace).Inc()
		ctrl.LoggerFrom(ctx).V(1).Info("pass deferred: the namespace's policies hold their share of the workers", "share", r.passesPerNamespace(), "retryAfter", namespaceBusyRetry)
		return ctrl.Result{RequeueAfter: namespaceBusyRetry}, nil
	}
	defer endPass()
	p := &v1alpha1.RecreatePolicy{}
	if live, err := r.readPolicy(ctx, req.NamespacedName, p); !live || err != nil {
		return ctrl.Result{}, err
	}
	now := r.Clock.Now()
	original := p.DeepCopy()
	r.carryUnwritten(p)
	p.Status.ObservedGeneration = p.Generation
	r.keepInterruption(p)

	spec, program, retry, ok := r.check(ctx, p)
	if !ok || spec.Schedule == nil {
		// No run is coming: a time left from an earlier spec would say
		// one is overdue.
		nextRun.DeleteLabelValues(p.Name, p.Namespace)
	}
	if !ok {
		return ctrl.Result{RequeueAfter: retry}, r.writeStatus(ctx, original, p, nil, 0, now)
	}

	in, err := r.read(ctx, p, spec, now)
	if err != nil {
		return ctrl.Result{}, err
	}
	var verdicts *planner.Verdicts
	if program != nil && !planner.Quarantined(p) {
		v, cancelled := r.judge(ctx, p, program, in)
		if cancelled {
			// Its next generation is reconciled next, or it is gone.
			ctrl.LoggerFrom(ctx).V(1).Info("pass cancelled: the policy changed or was deleted while its rules ran", "evaluated", v.evaluated)
			return ctrl.Result{}, nil
		}
		verdicts = &v.Verdicts
	}

	// The decisions are made one policy of the namespace at a time.
	unlock := r.state.lockDecisions(p.Namespace)
	defer unlock()
	if err := r.readAgain(ctx, p, in); err != nil {
		return ctrl.Result{}, err
	}
	pl := planner.Pass(p, in, program != nil, verdicts)
	if err := r.act(ctx, pl); err != nil {
		return ctrl.Result{}, err
	}
	unlock()

	r.observe(pl)
	if err := r.writeStatus(ctx, original, p, pl.Decisions(), spec.EvaluationInterval, now); err != nil {
		return ctrl.Result{}, err
	}
	ctrl.LoggerFrom(ctx).V(1).Info("policy reconciled", "selected", len(in.Pods), "requeueAfter", pl.Requeue)
	return ctrl.Result{RequeueAfter: pl.Requeue}, nil
}

// readPolicy reads the policy into p, once the journal was read; live is
// false when it is gone (then it is forgotten) or being deleted.
func (r *Reconciler) readPolicy(ctx context.Context, key types.NamespacedName, p *v1alpha1.RecreatePolicy) (live bool, err error) {
	if r.journaled != nil {
		select {
		case <-r.journaled:
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if err := r.Client.Get(ctx, key, p); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(key)
			r.releaseDropped(ctx, key.Namespace)
			return false, nil
		}
		return false, fmt.Errorf("read RecreatePolicy %s: %w", key, err)
	}
	return p.DeletionTimestamp == nil, nil
}

// check parses the spec and compiles the rules, setting the conditions
// that say how that went. ok is false when the policy cannot act; retry,
// when its rules were not compiled for what other policies' rules keep,
// is when to try again.
func (r *Reconciler) check(ctx context.Context, p *v1alpha1.RecreatePolicy) (spec *policyspec.Spec, program *policy.Program, retry time.Duration, ok bool) {
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
			planner.SetCondition(p, v1alpha1.ConditionScheduleValid, false, v1alpha1.ReasonInvalidSchedule, msg)
		}
		if otherErr {
			planner.SetCondition(p, v1alpha1.ConditionRulesCompiled, false, v1alpha1.ReasonInvalidParameters, msg)
		}
		planner.SetCondition(p, v1alpha1.ConditionReady, false, v1alpha1.ReasonInvalidSpec, msg)
		return nil, nil, 0, false
	}
	if spec.Schedule != nil {
		planner.SetCondition(p, v1alpha1.ConditionScheduleValid, true, v1alpha1.ReasonScheduleParsed, "")
	} else {
		planner.SetCondition(p, v1alpha1.ConditionScheduleValid, true, v1alpha1.ReasonNoSchedule, "")
	}
	if len(spec.Rules) > 0 {
		var err error
		program, err = r.Engine.Program(ctx, policy.Ref{Namespace: p.Namespace, Name: p.Name, UID: p.UID, Generation: p.Generation}, spec.Rules)
		if err != nil {
			planner.SetCondition(p, v1alpha1.ConditionRulesCompiled, false, v1alpha1.ReasonCompileError, err.Error())
			planner.SetCondition(p, v1alpha1.ConditionReady, false, v1alpha1.ReasonCompileError, err.Error())
			if errors.Is(err, policy.ErrCompiledTotal) {
				retry = compiledTotalRetry
			}
			return nil, nil, retry, false
		}
		planner.SetCondition(p, v1alpha1.ConditionRulesCompiled, true, v1alpha1.ReasonCompiled, "")
	} else {
		planner.SetCondition(p, v1alpha1.ConditionRulesCompiled, true, v1alpha1.ReasonNoRules, "")
	}
	return spec, program, 0, true
}

// compiledTotalRetry is how often a policy refused for the engine's bound
// on compiled rules tries again.
const compiledTotalRetry = time.Minute

func isScheduleField(f string) bool {
	return strings.HasPrefix(f, "spec.schedule") || strings.HasPrefix(f, "spec.windows")
}

// forget drops what the controller and its engine remember of a deleted
// policy, and its metrics.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.state.forget(key)
	r.Engine.Forget(key.Namespace, key.Name)
	forgetMetrics(key.Namespace, key.Name)
}
