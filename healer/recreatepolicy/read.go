package recreatepolicy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// passInput is what one pass read of the policy's namespace: the first
// step of a pass, and all that the steps after it know of the cluster.
type passInput struct {
	spec *policyspec.Spec
	now  time.Time
	// pods are the running pods the selector chooses.
	pods []*corev1.Pod
	// byName are all the namespace's pods, by name (for requests without
	// a pod UID label).
	byName map[string]*corev1.Pod
	// facts are what the namespace's requests say of the pods, with those
	// created but not yet in the cache.
	facts *requestFacts
	// budgets are the namespace's PodDisruptionBudgets and namespacePods
	// all its pods, which budgets may cover beyond the selection; budgets
	// is nil when the policy does not respect them or they are unknown.
	budgets       []policyv1.PodDisruptionBudget
	namespacePods []corev1.Pod
	// released are the budget charges to take back, by pod name: those of
	// requests completed since, or deleted before they completed.
	released []map[string]time.Time
	// paused says why Rejuv is paused cluster-wide, "" when it is not.
	paused string
}

// selectPods is the running pods of list the spec's selector chooses, and
// every pod of list by name.
func selectPods(spec *policyspec.Spec, list []corev1.Pod) ([]*corev1.Pod, map[string]*corev1.Pod) {
	byName := make(map[string]*corev1.Pod, len(list))
	var pods []*corev1.Pod
	for i := range list {
		pod := &list[i]
		byName[pod.Name] = pod
		if apipods.Running(pod) && spec.Selector.Matches(labels.Set(pod.Labels)) {
			pods = append(pods, pod)
		}
	}
	return pods, byName
}

// read reads the policy's pods and the namespace's requests: what its rules
// are judged on.
func (r *Reconciler) read(ctx context.Context, p *v1alpha1.RecreatePolicy, spec *policyspec.Spec, now time.Time) (*passInput, error) {
	list := &corev1.PodList{}
	// The cache's own pods, not copies: a pass only reads them, and
	// copying every pod of the namespace each pass is most of its garbage.
	if err := r.Client.List(ctx, list, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return nil, fmt.Errorf("list the pods of namespace %s: %w", p.Namespace, err)
	}
	in := &passInput{spec: spec, now: now}
	in.pods, in.byName = selectPods(spec, list.Items)
	return in, r.readRequests(ctx, p, in)
}

// readRequests reads the namespace's requests, with those created but not
// yet in the cache, and sums up what they say of the policy's pods.
func (r *Reconciler) readRequests(ctx context.Context, p *v1alpha1.RecreatePolicy, in *passInput) error {
	crrs, err := r.Requests.list(ctx, r.Client, p.Namespace)
	if err != nil {
		return err
	}
	crrs = r.state.withExpected(p.Namespace, crrs, in.now)
	in.facts = gatherRequests(p, crrs, in.byName, in.now)
	return nil
}

// readAgain reads what the gates need, under the namespace's lock: the
// requests as they are now (another policy may have created some while
// the rules ran), whether Rejuv is paused and the PodDisruptionBudgets.
func (r *Reconciler) readAgain(ctx context.Context, p *v1alpha1.RecreatePolicy, in *passInput) error {
	if err := r.readRequests(ctx, p, in); err != nil {
		return err
	}
	paused, err := r.Pause.Read(ctx)
	if err != nil {
		return err
	}
	in.paused = paused.Message
	if !respectsDisruptionBudgets(p) {
		return nil
	}
	pdbs := &policyv1.PodDisruptionBudgetList{}
	if err := r.Client.List(ctx, pdbs, client.InNamespace(p.Namespace)); err != nil {
		return fmt.Errorf("list the PodDisruptionBudgets of namespace %s: %w", p.Namespace, err)
	}
	if len(pdbs.Items) == 0 {
		in.budgets = []policyv1.PodDisruptionBudget{}
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
	in.budgets = pdbs.Items
	namespacePods := &corev1.PodList{}
	if err := r.Client.List(ctx, namespacePods, client.InNamespace(p.Namespace), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list the pods of namespace %s: %w", p.Namespace, err)
	}
	in.namespacePods = namespacePods.Items
	in.released = []map[string]time.Time{in.facts.completedCharges, r.state.takeDropped(p.Namespace)}
	return nil
}

// previewRead is what a pass would read from a preview's objects.
func previewRead(p *v1alpha1.RecreatePolicy, spec *policyspec.Spec, pods []corev1.Pod, crrs []appsv1beta1.ContainerRecreateRequest, pdbs []policyv1.PodDisruptionBudget, now time.Time) *passInput {
	in := &passInput{spec: spec, now: now}
	in.pods, in.byName = selectPods(spec, pods)
	in.facts = gatherRequests(p, crrs, in.byName, now)
	if respectsDisruptionBudgets(p) && pdbs != nil {
		in.budgets, in.namespacePods = pdbs, pods
	}
	return in
}

// respectsDisruptionBudgets says whether the policy holds recreations back
// for PodDisruptionBudgets (the default).
func respectsDisruptionBudgets(p *v1alpha1.RecreatePolicy) bool {
	respect := p.Spec.Rollout.RespectPodDisruptionBudgets
	return respect == nil || *respect
}
