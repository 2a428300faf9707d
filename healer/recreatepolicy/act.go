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
func (r *Reconciler) act(ctx context.Context, pl *planner.Plan) error {
	for _, released := range pl.In.Released {
		r.releaseCompleted(ctx, pl.In.Budgets, released)
	}
	for _, sec := range []*planner.Section{&pl.Rules, &pl.Runs} {
		for _, e := range sec.Events {
			r.eventf(pl.Policy, nil, e.Type, e.Reason, e.Action, "%s", e.Message)
		}
		if err := r.createAdmitted(ctx, pl, sec.Decisions); err != nil {
			return err
		}
		for i := range sec.Decisions {
			r.record(ctx, pl.Policy, &sec.Decisions[i])
		}
	}
	return nil
}

// createAdmitted creates the requests of the admitted candidates. The gates
// counted each admitted candidate at once, so that no limit is passed by
// the creates running together; a pod the cache shows unready, which
// they let go uncounted, is read again first (confirmUnready), the healthy
// pods of the budgets they spend are counted again from the API server
// (confirmBudgets), then the namespace's PodDisruptionBudgets are charged
// for them, one write per budget, and a candidate a budget refuses is held
// back. A request that
// exists already (a retry, a restarted manager) is not created again; the
// charges of pods whose request was not created are taken back.
func (r *Reconciler) createAdmitted(ctx context.Context, pl *planner.Plan, decisions []planner.Planned) error {
	var admitted []*planner.Planned
	for i := range decisions {
		if e := &decisions[i]; e.Gated && e.Decision.Outcome == v1alpha1.OutcomeCreated {
			admitted = append(admitted, e)
		}
	}
	if len(admitted) == 0 {
		return nil
	}
	if err := r.confirmUnready(ctx, admitted); err != nil {
		return err
	}
	if err := r.confirmBudgets(ctx, pl.In.Budgets, admitted, pl.In.Facts.InFlight); err != nil {
		return err
	}
	now := pl.In.Now
	var charged []*planner.Planned
	for _, e := range admitted {
		if e.Decision.Outcome == v1alpha1.OutcomeCreated {
			charged = append(charged, e)
		}
	}
	if len(pl.In.Budgets) > 0 && len(charged) > 0 {
		pods := make([]*corev1.Pod, len(charged))
		for i, e := range charged {
			pods[i] = e.Candidate.Pod
		}
		refused, err := r.chargeAll(ctx, pl.In.Budgets, pods, now)
		if err != nil {
			return err
		}
		for _, e := range charged {
			if why, ok := refused[e.Candidate.Pod.Name]; ok {
				e.Decision.Outcome, e.Decision.Message = v1alpha1.OutcomeDisruptionBudget, why
			}
		}
	}
	var creates errgroup.Group
	creates.SetLimit(createWorkers)
	for _, e := range charged {
		if e.Decision.Outcome == v1alpha1.OutcomeCreated {
			creates.Go(func() error { return r.create(ctx, pl, e.Candidate, &e.Decision) })
		}
	}
	err := creates.Wait()
	back := map[string]time.Time{}
	for _, e := range charged {
		if e.Decision.Outcome != v1alpha1.OutcomeCreated && e.Decision.Outcome != v1alpha1.OutcomeDisruptionBudget {
			back[e.Candidate.Pod.Name] = now
		}
	}
	if len(back) > 0 {
		r.releaseCompleted(ctx, pl.In.Budgets, back)
	}
	return err
}

// record counts one decision, and for a candidate the gates saw, logs it
// and sends the dry run's or the recurrence's events.
func (r *Reconciler) record(ctx context.Context, p *v1alpha1.RecreatePolicy, e *planner.Planned) {
	dec := e.Decision
	decisions.WithLabelValues(p.Name, p.Namespace, string(e.Kind), string(dec.Outcome)).Inc()
	if !e.Gated {
		return
	}
	c := e.Candidate
	switch dec.Outcome {
	case v1alpha1.OutcomeDryRun:
		r.eventf(p, c.Pod, corev1.EventTypeNormal, "DryRun", "Recreate",
			"dry run: %s would recreate %s of pod %s: %s", c.Trigger, strings.Join(c.Containers, ","), c.Pod.Name, c.Reason)
	case v1alpha1.OutcomeRecurring:
		r.reportRecurrence(p, c, dec)
	}
	ctrl.LoggerFrom(ctx).V(1).Info("decision", "pod", c.Pod.Name, "containers", c.Containers, "trigger", dec.Trigger, "outcome", dec.Outcome, "reason", c.Reason, "message", dec.Message)
}

// create creates the candidate's request, recording the outcome in dec;
// a request whose pod's budgets were charged says when.
func (r *Reconciler) create(ctx context.Context, pl *planner.Plan, c *planner.PodCandidate, dec *v1alpha1.Decision) error {
	p, now := pl.Policy, pl.In.Now
	c.Attempt = pl.In.Facts.Attempt(p, c)
	crr := planner.Request(p, c)
	dec.Request = crr.Name
	if coveredByAny(pl.In.Budgets, c.Pod) {
		crr.Annotations[appsv1beta1.DisruptionChargedAnnotation] = now.UTC().Format(time.RFC3339)
	}
	err := r.Requests.create(ctx, r.Client, crr)
	switch {
	case err == nil:
		r.state.created(crr, now)
		r.eventf(p, c.Pod, corev1.EventTypeNormal, "RecreationRequested", "Recreate",
			"%s: recreate %s of pod %s (ContainerRecreateRequest %s): %s", c.Trigger, strings.Join(c.Containers, ","), c.Pod.Name, crr.Name, c.Reason)
		r.eventf(c.Pod, p, corev1.EventTypeNormal, "RecreationRequested", "Recreate",
			"RecreatePolicy %s (%s) recreates %s: %s", p.Name, c.Trigger, strings.Join(c.Containers, ","), c.Reason)
	case apierrors.IsAlreadyExists(err):
		// Decided before; the request carries on.
		dec.Outcome, dec.Message = v1alpha1.OutcomeInFlight, "request "+crr.Name+" exists already"
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		dec.Outcome, dec.Message = v1alpha1.OutcomeError, err.Error()
		r.eventf(p, c.Pod, corev1.EventTypeWarning, "RecreationRefused", "Recreate", "ContainerRecreateRequest %s for pod %s refused: %v", crr.Name, c.Pod.Name, err)
	default:
		return fmt.Errorf("create ContainerRecreateRequest %s/%s for pod %s: %w", crr.Namespace, crr.Name, c.Pod.Name, err)
	}
	return nil
}
