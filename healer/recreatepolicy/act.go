package recreatepolicy

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

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
		if e := &decisions[i]; e.Admitted() {
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

// confirmUnready reads again, from the API server, the pod of each
// admitted candidate that the manager's cache shows unready. The gates let
// such a pod go without a unit of rollout.maxUnavailable, and its
// PodDisruptionBudgets charge it nothing; but a cache that lags (a watch
// backs off for up to half a minute after the API server restarts) may
// show unready a pod that is Ready again, and taking it would put the
// policy past its budgets. A pod Ready there (the same pod, by UID) is held
// back with Unavailable until a pass that counts it; a pod gone is left to
// its request, which the webhook refuses.
func (r *Reconciler) confirmUnready(ctx context.Context, admitted []*planner.Planned) error {
	var reads errgroup.Group
	reads.SetLimit(createWorkers)
	for _, e := range admitted {
		pod := e.Candidate.Pod
		if apipods.Ready(pod) {
			continue
		}
		reads.Go(func() error {
			live := &corev1.Pod{}
			if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(pod), live); err != nil {
				if apierrors.IsNotFound(err) {
					return nil
				}
				return fmt.Errorf("read pod %s/%s, which the cache shows unready, before recreating it: %w", pod.Namespace, pod.Name, err)
			}
			if live.UID == pod.UID && apipods.Ready(live) {
				e.Decision.Outcome, e.Decision.Message = v1alpha1.OutcomeUnavailable, readyAgainMessage(pod)
			}
			return nil
		})
	}
	return reads.Wait()
}

// readyAgainMessage says why a pod the cache showed unready waits.
func readyAgainMessage(pod *corev1.Pod) string {
	return fmt.Sprintf("pod %s is Ready, though the manager's cache showed it unready: it waits for a pass that counts it against rollout.maxUnavailable and its PodDisruptionBudgets", pod.Name)
}

// budgetListPage bounds the pods one page of confirmBudgets' list holds.
const budgetListPage = 500

// confirmBudgets counts again, from the API server, the healthy pods of
// each PodDisruptionBudget covering a Ready candidate about to be charged,
// and holds back with DisruptionBudget the candidates that count does not
// allow. The budget's status, which the charge spends, lags the pods it
// counts (the disruption controller's own pass, a few seconds), and so may
// the manager's cache (a watch backs off for up to half a minute after the
// API server restarts): both may still count healthy a pod whose node was
// just lost. The rule is the pass's (planner.DisruptionCheck), with the pods as the
// API server has them, read a page at a time and counted, not kept.
func (r *Reconciler) confirmBudgets(ctx context.Context, budgets []policyv1.PodDisruptionBudget, candidates []*planner.Planned, inFlight map[types.UID]bool) error {
	for i := range budgets {
		pdb := &budgets[i]
		sel := planner.PDBSelector(pdb)
		if sel == nil {
			continue
		}
		var covered []*planner.Planned
		for _, e := range candidates {
			if pod := e.Candidate.Pod; e.Decision.Outcome == v1alpha1.OutcomeCreated && apipods.Ready(pod) && sel.Matches(labels.Set(pod.Labels)) {
				covered = append(covered, e)
			}
		}
		if len(covered) == 0 {
			continue
		}
		// The gates counted this pass's candidates in flight already;
		// they are healthy until their requests exist.
		admitted := map[types.UID]bool{}
		for _, e := range covered {
			admitted[e.Candidate.Pod.UID] = true
		}
		healthy, err := r.liveHealthy(ctx, pdb.Namespace, sel, func(uid types.UID) bool { return inFlight[uid] && !admitted[uid] })
		if err != nil {
			return fmt.Errorf("count the healthy pods of PodDisruptionBudget %s/%s from the API server before charging it: %w", pdb.Namespace, pdb.Name, err)
		}
		allowed := planner.BudgetAllows(pdb, healthy)
		for _, e := range covered {
			if allowed < 1 {
				e.Decision.Outcome = v1alpha1.OutcomeDisruptionBudget
				e.Decision.Message = fmt.Sprintf("PodDisruptionBudget %s allows no disruption now: %d of its pods are healthy as the API server has them, %d desired, counting the pods being recreated as disrupted", pdb.Name, healthy, pdb.Status.DesiredHealthy)
				continue
			}
			allowed--
		}
	}
	return nil
}

// liveHealthy counts the pods of the namespace that sel selects, Ready, not
// being deleted and not being recreated, as the API server has them.
func (r *Reconciler) liveHealthy(ctx context.Context, namespace string, sel labels.Selector, recreating func(types.UID) bool) (int32, error) {
	var healthy int32
	list := &corev1.PodList{}
	for {
		if err := r.Reader.List(ctx, list, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel},
			client.Limit(budgetListPage), client.Continue(list.Continue)); err != nil {
			return 0, err
		}
		for i := range list.Items {
			pod := &list.Items[i]
			if planner.CountsHealthy(pod, recreating(pod.UID)) {
				healthy++
			}
		}
		if list.Continue == "" {
			return healthy, nil
		}
	}
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

// A policy charges the PodDisruptionBudgets covering a pod before it asks
// for the pod's recreation, as the eviction API charges them before an
// eviction: in each budget's status, one disruption fewer allowed and the
// pod in disruptedPods, written under the resourceVersion it read (one
// write per budget for all the pods a pass admits under it). The
// disruption controller then counts the pod disrupted until the entry goes
// (for at most two minutes), and an eviction by someone else sees the
// budget spent: the two are ordered by the budget's resourceVersion, so
// neither can take the budget's last disruption beside the other. The
// policy takes its entries back once the request completes.
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets/status,verbs=update

// chargeTries bounds the retries of a charge whose write conflicts.
const chargeTries = 5

// chargeAll charges the budgets for the pods at the time at, one write
// of each budget's status for all the pods it covers, from the budgets as
// the pass read them (read again only when a write conflicts); budgets
// are updated to what was written. It returns why each pod refused is
// refused: one a budget has no disruption left for, and whose charges by
// other budgets are then taken back. A pod that is not Ready is not
// healthy by the budgets' count and is charged nothing.
func (r *Reconciler) chargeAll(ctx context.Context, budgets []policyv1.PodDisruptionBudget, pods []*corev1.Pod, at time.Time) (refused map[string]string, err error) {
	refused = map[string]string{}
	charged := make([]map[string]time.Time, len(budgets))
	for i := range budgets {
		sel := planner.PDBSelector(&budgets[i])
		if sel == nil {
			continue
		}
		var covered []string
		for _, pod := range pods {
			if _, out := refused[pod.Name]; !out && apipods.Ready(pod) && sel.Matches(labels.Set(pod.Labels)) {
				covered = append(covered, pod.Name)
			}
		}
		if len(covered) == 0 {
			continue
		}
		if charged[i], err = r.chargeBudget(ctx, &budgets[i], covered, at, refused); err != nil {
			break
		}
	}
	// Charges of pods refused by another budget, or of a pass that failed.
	for i := range budgets {
		back := map[string]time.Time{}
		for pod := range charged[i] {
			if _, out := refused[pod]; out || err != nil {
				back[pod] = at
			}
		}
		r.releaseEntries(ctx, &budgets[i], back)
	}
	return refused, err
}

// coveredByAny says whether one of the budgets covers pod.
func coveredByAny(budgets []policyv1.PodDisruptionBudget, pod *corev1.Pod) bool {
	for i := range budgets {
		if planner.PDBCovers(&budgets[i], pod) {
			return true
		}
	}
	return false
}

// chargeBudget spends one disruption of the budget on each pod named, in
// one write of its status, and returns the pods charged; those it has no
// disruption left for are added to refused, with the reason.
func (r *Reconciler) chargeBudget(ctx context.Context, pdb *policyv1.PodDisruptionBudget, pods []string, at time.Time, refused map[string]string) (map[string]time.Time, error) {
	for try := 1; ; try++ {
		updated := pdb.DeepCopy()
		charged, why := map[string]time.Time{}, map[string]string{}
		for _, pod := range pods {
			switch _, ok := updated.Status.DisruptedPods[pod]; {
			case ok:
				// Charged already (a pass that created the request before).
			case updated.Status.ObservedGeneration < updated.Generation:
				why[pod] = fmt.Sprintf("PodDisruptionBudget %s has not been counted since it changed", pdb.Name)
			case updated.Status.DisruptionsAllowed <= 0:
				why[pod] = fmt.Sprintf("PodDisruptionBudget %s allows no disruption now (%d healthy, %d desired)", pdb.Name, pdb.Status.CurrentHealthy, pdb.Status.DesiredHealthy)
			default:
				updated.Status.DisruptionsAllowed--
				if updated.Status.DisruptedPods == nil {
					updated.Status.DisruptedPods = map[string]metav1.Time{}
				}
				updated.Status.DisruptedPods[pod] = metav1.NewTime(at)
				charged[pod] = at
			}
		}
		err := error(nil)
		if len(charged) > 0 {
			err = r.Client.Status().Update(ctx, updated)
		}
		if err == nil {
			*pdb = *updated
			maps.Copy(refused, why)
			return charged, nil
		}
		if !apierrors.IsConflict(err) || try == chargeTries {
			return nil, fmt.Errorf("charge PodDisruptionBudget %s/%s for %d pods: %w", pdb.Namespace, pdb.Name, len(charged), err)
		}
		// Written by someone else meanwhile (an eviction): read it again.
		if err := r.Reader.Get(ctx, client.ObjectKeyFromObject(pdb), pdb); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, nil
			}
			return nil, fmt.Errorf("read PodDisruptionBudget %s/%s to charge it: %w", pdb.Namespace, pdb.Name, err)
		}
	}
}

// releaseEntries removes from the budget's disruptedPods each pod's entry
// that is the one charged at the time given (to the second, as the API
// keeps it), in one write, and keeps the budget as written. A budget
// changed meanwhile is left to the next pass, or to the disruption
// controller's timeout.
func (r *Reconciler) releaseEntries(ctx context.Context, pdb *policyv1.PodDisruptionBudget, entries map[string]time.Time) {
	var updated *policyv1.PodDisruptionBudget
	for pod, at := range entries {
		entry, ok := pdb.Status.DisruptedPods[pod]
		if !ok || !entry.Time.Truncate(time.Second).Equal(at.Truncate(time.Second)) {
			continue
		}
		if updated == nil {
			updated = pdb.DeepCopy()
		}
		delete(updated.Status.DisruptedPods, pod)
	}
	if updated != nil && r.Client.Status().Update(ctx, updated) == nil {
		*pdb = *updated
	}
}

// releaseCompleted takes back the budgets' entries for the pods whose
// charged request has completed (or was not created), one write per
// budget, so that the disruption controller counts them again as soon as
// they are healthy rather than two minutes on.
func (r *Reconciler) releaseCompleted(ctx context.Context, pdbs []policyv1.PodDisruptionBudget, completed map[string]time.Time) {
	for i := range pdbs {
		r.releaseEntries(ctx, &pdbs[i], completed)
	}
}

// releaseDropped takes back the namespace's dropped charges from its
// budgets as they are now; used when no pass of a policy reads them (its
// policy is gone).
func (r *Reconciler) releaseDropped(ctx context.Context, namespace string) {
	dropped := r.state.takeDropped(namespace)
	if len(dropped) == 0 {
		return
	}
	pdbs := &policyv1.PodDisruptionBudgetList{}
	if err := r.Reader.List(ctx, pdbs, client.InNamespace(namespace)); err != nil {
		return
	}
	r.releaseCompleted(ctx, pdbs.Items, dropped)
}

// eventf records an event with its note cut to the events API's bound,
// saying so: the API refuses a longer note, and a rule's error or reason
// may be of any size, so the event would be lost.
func (r *Reconciler) eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any) {
	r.Recorder.Eventf(regarding, related, eventtype, reason, action, "%s", v1alpha1.Truncate(fmt.Sprintf(note, args...), v1alpha1.MaxNoteLength))
}

// reportRecurrence sends the Warning events of a candidate that
// limits.memoryRecurrence holds back, on the policy and the pod, at the
// first pass that holds it (the holds of the passes before say which).
func (r *Reconciler) reportRecurrence(p *v1alpha1.RecreatePolicy, c *planner.PodCandidate, dec v1alpha1.Decision) {
	if r.state.heldBy(types.NamespacedName{Namespace: p.Namespace, Name: p.Name}, c.Pod.Name, c.Trigger.Kind) == v1alpha1.OutcomeRecurring {
		return
	}
	r.eventf(p, c.Pod, corev1.EventTypeWarning, "MemoryRecurring", "Recreate",
		"pod %s held back: %s (%s)", c.Pod.Name, dec.Message, c.Reason)
	r.eventf(c.Pod, p, corev1.EventTypeWarning, "MemoryRecurring", "Recreate",
		"RecreatePolicy %s holds back %s: %s (%s)", p.Name, strings.Join(c.Containers, ","), dec.Message, c.Reason)
}
