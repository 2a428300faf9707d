package planner

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// Input is what one pass read of the policy's namespace: the first step
// of a pass, and all that the steps after it know of the cluster.
type Input struct {
	Spec *policyspec.Spec
	Now  time.Time
	// Pods are the running pods the selector chooses.
	Pods []*corev1.Pod
	// ByName are all the namespace's pods, by name (for requests without
	// a pod UID label).
	ByName map[string]*corev1.Pod
	// Facts are what the namespace's requests say of the pods, with those
	// created but not yet in the cache.
	Facts *Facts
	// Budgets are the namespace's PodDisruptionBudgets and NamespacePods
	// all its pods, which budgets may cover beyond the selection; Budgets
	// is nil when the policy does not respect them or they are unknown.
	Budgets       []policyv1.PodDisruptionBudget
	NamespacePods []corev1.Pod
	// Released are the budget charges to take back, by pod name: those of
	// requests completed since, or deleted before they completed.
	Released []map[string]time.Time
	// Paused says why Rejuv is paused cluster-wide, "" when it is not.
	Paused string
}

// NewInput is what a pass reads of the namespace's pods list at now,
// before its requests: the running pods the spec's selector chooses, and
// every pod of list by name.
func NewInput(spec *policyspec.Spec, list []corev1.Pod, now time.Time) *Input {
	in := &Input{Spec: spec, Now: now, ByName: make(map[string]*corev1.Pod, len(list))}
	for i := range list {
		pod := &list[i]
		in.ByName[pod.Name] = pod
		if apipods.Running(pod) && spec.Selector.Matches(labels.Set(pod.Labels)) {
			in.Pods = append(in.Pods, pod)
		}
	}
	return in
}

// InputOf is what a pass would read from objects given rather than read
// (a preview's, a replay's): pods, requests crrs and budgets pdbs (nil
// when unknown).
func InputOf(p *v1alpha1.RecreatePolicy, spec *policyspec.Spec, pods []corev1.Pod, crrs []appsv1beta1.ContainerRecreateRequest, pdbs []policyv1.PodDisruptionBudget, now time.Time) *Input {
	in := NewInput(spec, pods, now)
	in.Facts = GatherRequests(p, crrs, in.ByName, now)
	if RespectsDisruptionBudgets(p) && pdbs != nil {
		in.Budgets, in.NamespacePods = pdbs, pods
	}
	return in
}

// RespectsDisruptionBudgets says whether the policy holds recreations
// back for PodDisruptionBudgets (the default).
func RespectsDisruptionBudgets(p *v1alpha1.RecreatePolicy) bool {
	respect := p.Spec.Rollout.RespectPodDisruptionBudgets
	return respect == nil || *respect
}
