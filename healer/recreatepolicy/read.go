package recreatepolicy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
