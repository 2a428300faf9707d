package recreatepolicy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// createWorkers is how many requests one pass creates at once. Each create
// waits on the API server and Rejuv's webhook (tens of milliseconds under
// load): one at a time, a rolling restart of a thousand pods spent most of
// its time creating requests, not restarting containers.
const createWorkers = 16

// act does what the plan decided: it takes back the budget charges of
// requests done with, then, section by section, sends the section's
// events, creates the requests of its admitted candidates and records
// each decision, in order.
func (r *Reconciler) act(ctx context.Context, pl *plan) error {
	for _, released := range pl.in.released {
		r.releaseCompleted(ctx, pl.in.budgets, released)
	}
	for _, sec := range []*section{&pl.rules, &pl.runs} {
		for _, e := range sec.events {
			r.Recorder.Eventf(pl.p, nil, e.eventType, e.reason, e.action, "%s", e.message)
		}
		if err := r.createAdmitted(ctx, pl, sec.decisions); err != nil {
			return err
		}
		for i := range sec.decisions {
			r.record(ctx, pl.p, &sec.decisions[i])
		}
	}
	return nil
}

// createAdmitted creates the requests of the admitted candidates. The gates
// counted each admitted candidate at once, so that no limit is passed by
// the creates running together; requests are created concurrently unless
// the namespace's PodDisruptionBudgets are charged for them (a charge is a
// write of the budget's status, one at a time). A request that exists
// already (a retry, a restarted manager) is not created again.
func (r *Reconciler) createAdmitted(ctx context.Context, pl *plan, decisions []planned) error {
	limit := createWorkers
	if len(pl.in.budgets) > 0 {
		limit = 1
	}
	var creates errgroup.Group
	creates.SetLimit(limit)
	for i := range decisions {
		if e := &decisions[i]; e.gated && e.decision.Outcome == v1alpha1.OutcomeCreated {
			creates.Go(func() error { return r.create(ctx, pl, e.c, &e.decision) })
		}
	}
	return creates.Wait()
}

// record counts one decision, and for a candidate the gates saw, logs it
// and sends the dry run's or the recurrence's events.
func (r *Reconciler) record(ctx context.Context, p *v1alpha1.RecreatePolicy, e *planned) {
	dec := e.decision
	decisions.WithLabelValues(p.Name, p.Namespace, string(e.kind), string(dec.Outcome)).Inc()
	if !e.gated {
		return
	}
	c := e.c
	switch dec.Outcome {
	case v1alpha1.OutcomeDryRun:
		r.Recorder.Eventf(p, c.Pod, corev1.EventTypeNormal, "DryRun", "Recreate",
			"dry run: %s would recreate %s of pod %s: %s", c.Trigger, strings.Join(c.Containers, ","), c.Pod.Name, c.Reason)
	case v1alpha1.OutcomeRecurring:
		r.reportRecurrence(p, c, dec)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("decision", "pod", c.Pod.Name, "containers", c.Containers, "trigger", dec.Trigger, "outcome", dec.Outcome, "reason", c.Reason, "message", dec.Message)
}

// create charges the PodDisruptionBudgets covering the candidate's pod and
// creates its request, recording the outcome in dec. A budget that allows
// no disruption now holds the pod back; a charge whose request was not
// created is taken back.
func (r *Reconciler) create(ctx context.Context, pl *plan, c *planner.PodCandidate, dec *v1alpha1.Decision) error {
	p, now := pl.p, pl.in.now
	crr := planner.Request(p, c)
	dec.Request = crr.Name
	if budgets := covering(pl.in.budgets, c.Pod); len(budgets) > 0 {
		why, err := r.charge(ctx, c.Pod, budgets, now)
		if err != nil {
			return err
		}
		if why != "" {
			dec.Outcome, dec.Message, dec.Request = v1alpha1.OutcomeDisruptionBudget, why, ""
			return nil
		}
		crr.Annotations[appsv1beta1.DisruptionChargedAnnotation] = now.UTC().Format(time.RFC3339)
		defer func() {
			if dec.Outcome != v1alpha1.OutcomeCreated {
				r.release(ctx, c.Pod, budgets, now)
			}
		}()
	}
	err := r.Requests.create(ctx, r.Client, crr)
	switch {
	case err == nil:
		r.state.created(crr, now)
		r.Recorder.Eventf(p, c.Pod, corev1.EventTypeNormal, "RecreationRequested", "Recreate",
			"%s: recreate %s of pod %s (ContainerRecreateRequest %s): %s", c.Trigger, strings.Join(c.Containers, ","), c.Pod.Name, crr.Name, c.Reason)
		r.Recorder.Eventf(c.Pod, p, corev1.EventTypeNormal, "RecreationRequested", "Recreate",
			"RecreatePolicy %s (%s) recreates %s: %s", p.Name, c.Trigger, strings.Join(c.Containers, ","), c.Reason)
	case apierrors.IsAlreadyExists(err):
		// Decided before; the request carries on.
		dec.Outcome, dec.Message = v1alpha1.OutcomeInFlight, "request "+crr.Name+" exists already"
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		dec.Outcome, dec.Message = v1alpha1.OutcomeError, err.Error()
		r.Recorder.Eventf(p, c.Pod, corev1.EventTypeWarning, "RecreationRefused", "Recreate", "ContainerRecreateRequest %s for pod %s refused: %v", crr.Name, c.Pod.Name, err)
	default:
		return fmt.Errorf("create ContainerRecreateRequest %s/%s for pod %s: %w", crr.Namespace, crr.Name, c.Pod.Name, err)
	}
	return nil
}
