package recreatepolicy

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// read reads the policy's pods and the namespace's requests: what its rules
// are judged on.
func (r *Reconciler) read(ctx context.Context, p *v1alpha1.RecreatePolicy, spec *policyspec.Spec, now time.Time) (*planner.Input, error) {
	list := &corev1.PodList{}
	// The cache's own pods, not copies: a pass only reads them, and
	// copying every pod of the namespace each pass is most of its garbage.
	if err := r.Client.List(ctx, list, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list the pods of namespace %s: %w", p.Namespace, err)
	}
	in := planner.NewInput(spec, list.Items, now)
	return in, r.readRequests(ctx, p, in)
}

// readRequests reads the namespace's requests, with those created but not
// yet in the cache, and sums up what they say of the policy's pods.
func (r *Reconciler) readRequests(ctx context.Context, p *v1alpha1.RecreatePolicy, in *planner.Input) error {
	crrs, err := r.Requests.list(ctx, r.Client, p.Namespace)
	if err != nil {
		return err
	}
	crrs = r.state.withExpected(p.Namespace, crrs, in.Now)
	in.Facts = planner.GatherRequests(p, crrs, in.ByName, in.Now)
	return nil
}

// readAgain reads what the gates need, under the namespace's lock: the
// requests as they are now (another policy may have created some while
// the rules ran), whether Rejuv is paused and the PodDisruptionBudgets.
func (r *Reconciler) readAgain(ctx context.Context, p *v1alpha1.RecreatePolicy, in *planner.Input) error {
	if err := r.readRequests(ctx, p, in); err != nil {
		return err
	}
	paused, err := r.Pause.Read(ctx)
	if err != nil {
		return err
	}
	in.Paused = paused.Message
	if !planner.RespectsDisruptionBudgets(p) {
		return nil
	}
	pdbs := &policyv1.PodDisruptionBudgetList{}
	if err := r.Client.List(ctx, pdbs, client.InNamespace(p.Namespace)); err != nil {
		return fmt.Errorf("list the PodDisruptionBudgets of namespace %s: %w", p.Namespace, err)
	}
	if len(pdbs.Items) == 0 {
		in.Budgets = []policyv1.PodDisruptionBudget{}
		return nil
	}
	// An eviction by someone else spends its budget in the budget's
	// status at once, before its pod is deleted: read the budgets from
	// the API server, as the cache may not show that yet, nor the pod's
	// deletion. (The cache's list above spares that read in namespaces
	// without budgets.)
	if err := r.Reader.List(ctx, pdbs, client.InNamespace(p.Namespace)); err != nil {
		return fmt.Errorf("read the PodDisruptionBudgets of namespace %s: %w", p.Namespace, err)
	}
	in.Budgets = pdbs.Items
	namespacePods := &corev1.PodList{}
	if err := r.Client.List(ctx, namespacePods, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list the pods of namespace %s: %w", p.Namespace, err)
	}
	in.NamespacePods = namespacePods.Items
	in.Released = []map[string]time.Time{in.Facts.CompletedCharges, r.state.takeDropped(p.Namespace)}
	return nil
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
