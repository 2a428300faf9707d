package recreatepolicy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// decider passes candidates through the gates, creates the requests of
// those that get through, and collects the decisions for the status.
type decider struct {
	r         *Reconciler
	p         *v1alpha1.RecreatePolicy
	now       time.Time
	decisions []v1alpha1.Decision
	// pdbs are the namespace's PodDisruptionBudgets, charged for each
	// request; nil when the policy does not respect them.
	pdbs []policyv1.PodDisruptionBudget
}

// createWorkers is how many requests one pass creates at once. Each create
// waits on the API server and Rejuv's webhook (tens of milliseconds under
// load): one at a time, a rolling restart of a thousand pods spent most of
// its time creating requests, not restarting containers.
const createWorkers = 16

// decideAll takes the candidates through the gates in order and creates
// the requests of those that get through, then records each decision in
// that order. The gates count each admitted candidate at once, so that no
// limit is passed by the creates running together; requests are created
// concurrently unless the namespace's PodDisruptionBudgets are charged for
// them (a charge is a write of the budget's status, one at a time). A
// request that exists already (a retry, a restarted manager) is not created
// again.
func (d *decider) decideAll(ctx context.Context, s *planner.Situation, cands []*planner.PodCandidate) error {
	decs := make([]v1alpha1.Decision, len(cands))
	var admitted []int
	for i, c := range cands {
		v := s.Admit(c)
		decs[i] = v1alpha1.Decision{
			Time: metav1.NewTime(d.now), Pod: c.Pod.Name, Containers: c.Containers,
			Trigger: c.Trigger.String(), Outcome: v.Outcome, Reason: c.Reason, Message: v.Message,
		}
		if v.Outcome == v1alpha1.OutcomeCreated {
			admitted = append(admitted, i)
		}
	}
	limit := createWorkers
	if len(d.pdbs) > 0 {
		limit = 1
	}
	var creates errgroup.Group
	creates.SetLimit(limit)
	for _, i := range admitted {
		creates.Go(func() error { return d.create(ctx, cands[i], &decs[i]) })
	}
	if err := creates.Wait(); err != nil {
		return err
	}
	for i, c := range cands {
		d.record(ctx, c, decs[i])
	}
	return nil
}

// record keeps one decision for the status, its metric and log line, and
// the dry run's event.
func (d *decider) record(ctx context.Context, c *planner.PodCandidate, dec v1alpha1.Decision) {
	switch dec.Outcome {
	case v1alpha1.OutcomeDryRun:
		d.r.Recorder.Eventf(d.p, c.Pod, corev1.EventTypeNormal, "DryRun", "Recreate",
			"dry run: %s would recreate %s of pod %s: %s", c.Trigger, strings.Join(c.Containers, ","), c.Pod.Name, c.Reason)
	case v1alpha1.OutcomeRecurring:
		d.reportRecurrence(c, dec)
	}
	decisions.WithLabelValues(d.p.Name, d.p.Namespace, string(c.Trigger.Kind), string(dec.Outcome)).Inc()
	ctrl.LoggerFrom(ctx).V(1).Info("decision", "pod", c.Pod.Name, "containers", c.Containers, "trigger", dec.Trigger, "outcome", dec.Outcome, "reason", c.Reason, "message", dec.Message)
	d.decisions = append(d.decisions, dec)
}

// create charges the PodDisruptionBudgets covering the candidate's pod and
// creates its request, recording the outcome in dec. A budget that allows
// no disruption now holds the pod back; a charge whose request was not
// created is taken back.
func (d *decider) create(ctx context.Context, c *planner.PodCandidate, dec *v1alpha1.Decision) error {
	crr := planner.Request(d.p, c)
	dec.Request = crr.Name
	if budgets := covering(d.pdbs, c.Pod); len(budgets) > 0 {
		why, err := d.r.charge(ctx, c.Pod, budgets, d.now)
		if err != nil {
			return err
		}
		if why != "" {
			dec.Outcome, dec.Message, dec.Request = v1alpha1.OutcomeDisruptionBudget, why, ""
			return nil
		}
		crr.Annotations[appsv1beta1.DisruptionChargedAnnotation] = d.now.UTC().Format(time.RFC3339)
		defer func() {
			if dec.Outcome != v1alpha1.OutcomeCreated {
				d.r.release(ctx, c.Pod, budgets, d.now)
			}
		}()
	}
	err := d.r.Requests.create(ctx, d.r.Client, crr)
	switch {
	case err == nil:
		d.r.expected.created(crr, d.now)
		d.r.Recorder.Eventf(d.p, c.Pod, corev1.EventTypeNormal, "RecreationRequested", "Recreate",
			"%s: recreate %s of pod %s (ContainerRecreateRequest %s): %s", c.Trigger, strings.Join(c.Containers, ","), c.Pod.Name, crr.Name, c.Reason)
		d.r.Recorder.Eventf(c.Pod, d.p, corev1.EventTypeNormal, "RecreationRequested", "Recreate",
			"RecreatePolicy %s (%s) recreates %s: %s", d.p.Name, c.Trigger, strings.Join(c.Containers, ","), c.Reason)
	case apierrors.IsAlreadyExists(err):
		// Decided before; the request carries on.
		dec.Outcome, dec.Message = v1alpha1.OutcomeInFlight, "request "+crr.Name+" exists already"
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		dec.Outcome, dec.Message = v1alpha1.OutcomeError, err.Error()
		d.r.Recorder.Eventf(d.p, c.Pod, corev1.EventTypeWarning, "RecreationRefused", "Recreate", "ContainerRecreateRequest %s for pod %s refused: %v", crr.Name, c.Pod.Name, err)
	default:
		return fmt.Errorf("create ContainerRecreateRequest %s/%s for pod %s: %w", crr.Namespace, crr.Name, c.Pod.Name, err)
	}
	return nil
}

// note records a decision that concerns no pod, such as a skipped run.
func (d *decider) note(t planner.Trigger, outcome v1alpha1.DecisionOutcome, msg string) {
	decisions.WithLabelValues(d.p.Name, d.p.Namespace, string(t.Kind), string(outcome)).Inc()
	d.decisions = append(d.decisions, v1alpha1.Decision{Time: metav1.NewTime(d.now), Trigger: t.String(), Outcome: outcome, Message: msg})
	if outcome == v1alpha1.OutcomeSkipped {
		d.r.Recorder.Eventf(d.p, nil, corev1.EventTypeWarning, "RunSkipped", "Run", "%s", msg)
	}
}

// skipped records a decision to leave a candidate alone: what triggered
// it and why, and why nothing is done.
func (d *decider) skipped(c *planner.PodCandidate, msg string) {
	d.outside(c, v1alpha1.OutcomeSkipped, msg)
}

// upToDate records, once per pod and run, that a run's pod needs
// nothing: its containers were started again since the run began.
func (d *decider) upToDate(c *planner.PodCandidate) {
	for _, list := range [][]v1alpha1.Decision{d.decisions, d.p.Status.RecentDecisions} {
		for _, dec := range list {
			if dec.Pod == c.Pod.Name && dec.Reason == c.Reason && dec.Outcome == v1alpha1.OutcomeUpToDate {
				return
			}
		}
	}
	d.outside(c, v1alpha1.OutcomeUpToDate, "started again since the run began, by something other than the run: nothing to recreate")
}

// outside records, and counts, a decision about a candidate that the
// gates never saw.
func (d *decider) outside(c *planner.PodCandidate, outcome v1alpha1.DecisionOutcome, msg string) {
	decisions.WithLabelValues(d.p.Name, d.p.Namespace, string(c.Trigger.Kind), string(outcome)).Inc()
	d.decisions = append(d.decisions, candidateDecision(c, outcome, msg, d.now))
}

// candidateDecision is a decision about a candidate the gates never saw:
// left alone (Skipped) or needing nothing (UpToDate).
func candidateDecision(c *planner.PodCandidate, outcome v1alpha1.DecisionOutcome, msg string, now time.Time) v1alpha1.Decision {
	return v1alpha1.Decision{
		Time: metav1.NewTime(now), Pod: c.Pod.Name, Containers: c.Containers,
		Trigger: c.Trigger.String(), Outcome: outcome, Reason: c.Reason, Message: msg,
	}
}

// flush puts the new decisions at the head of the status list. A decision
// that repeats the outcome of the latest one for the same pod and trigger
// (a candidate held back at every evaluation, its message saying how long
// ago the last recreation was) replaces it rather than pushing older ones
// out.
func (d *decider) flush(p *v1alpha1.RecreatePolicy) {
	list := p.Status.RecentDecisions
	for _, dec := range d.decisions {
		// Cut at once: a decision past the last kept never comes back
		// (each prepend moves the others back by one, and takes at most
		// one out), and a pass over a run of a thousand pods has as many
		// decisions, which would otherwise be copied on each prepend.
		list = prepend(list, dec)
		if len(list) > v1alpha1.MaxRecentDecisions {
			list = list[:v1alpha1.MaxRecentDecisions]
		}
	}
	p.Status.RecentDecisions = list
}

func prepend(list []v1alpha1.Decision, dec v1alpha1.Decision) []v1alpha1.Decision {
	for i := range list {
		if list[i].Pod == dec.Pod && list[i].Trigger == dec.Trigger {
			if list[i].Outcome == dec.Outcome && dec.Outcome != v1alpha1.OutcomeCreated {
				list = append(list[:i:i], list[i+1:]...)
			}
			break
		}
	}
	return append([]v1alpha1.Decision{dec}, list...)
}
