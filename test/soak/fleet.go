package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/images"
)

// namespacePrefix marks the soak's namespaces: the observer watches them
// and a new run removes those an earlier one left.
const namespacePrefix = "soak-"

// An app is one Deployment of testapp with what goes with it: a Service
// its clients reach it through, a PodDisruptionBudget, the policies that
// recreate its containers.
type app struct {
	namespace, name string
	replicas        int32
	// args are testapp's flags.
	args []string
	// served: clients send it steady traffic through its Service.
	served bool
	// budget, when set, is the PodDisruptionBudget's maxUnavailable.
	budget *intstr.IntOrString
	// policies select the app's pods; created before the Deployment, so
	// that its pods get the readiness gate.
	policies []*v1alpha1.RecreatePolicy
}

// The load's apps, one namespace each:
//   - rolling-a: a run every minute, one pod at a time, under a budget of 1;
//   - rolling-b: a run every two minutes, two pods at a time (50% of 4),
//     under a budget that allows one;
//   - rules: pods the load makes unready, recreated by stuck-readiness;
//   - hand: requests made by hand and by kubectl rejuv restart;
//   - churn: a run every minute while the load scales, deletes and evicts
//     its pods (no clients: a deleted pod's clients would fail whatever
//     Rejuv does).
func fleet() []*app {
	return []*app{
		{namespace: namespacePrefix + "rolling-a", name: "web", replicas: 4, served: true, budget: new(intstr.FromInt32(1)),
			policies: []*v1alpha1.RecreatePolicy{scheduled("rolling", "* * * * *", intstr.FromInt32(1))}},
		{namespace: namespacePrefix + "rolling-b", name: "web", replicas: 4, served: true, budget: new(intstr.FromInt32(1)),
			policies: []*v1alpha1.RecreatePolicy{scheduled("rolling", "*/2 * * * *", intstr.FromString("50%"))}},
		{namespace: namespacePrefix + "rules", name: "stuck", replicas: 4, served: true,
			policies: []*v1alpha1.RecreatePolicy{stuckReadiness("stuck", "stuck", 5*time.Second)}},
		{namespace: namespacePrefix + "hand", name: "web", replicas: 4, served: true,
			policies: []*v1alpha1.RecreatePolicy{scheduled("nightly", "0 3 * * *", intstr.FromInt32(1))}},
		{namespace: namespacePrefix + "churn", name: "web", replicas: 4, budget: new(intstr.FromInt32(1)),
			policies: []*v1alpha1.RecreatePolicy{scheduled("rolling", "* * * * *", intstr.FromInt32(1))}},
	}
}

// scheduled is a policy that restarts the pods of app web on cron,
// maxUnavailable at a time, respecting PodDisruptionBudgets (the
// default).
func scheduled(name, cron string, maxUnavailable intstr.IntOrString) *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Schedule: &v1alpha1.Schedule{Cron: cron},
			Rollout:  v1alpha1.Rollout{MaxUnavailable: &maxUnavailable},
		},
	}
}

// stuckReadiness is a policy that recreates app's containers not ready
// for notReadyFor.
func stuckReadiness(name, app string, notReadyFor time.Duration) *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
			Rules: []v1alpha1.Rule{{Name: "stuck", Builtin: "stuck-readiness", Parameters: map[string]apiextensionsv1.JSON{
				"notReadyFor": {Raw: fmt.Appendf(nil, "%q", notReadyFor.String())}}}},
			EvaluationInterval: &metav1.Duration{Duration: time.Second},
			Limits:             v1alpha1.Limits{Cooldown: &metav1.Duration{Duration: 10 * time.Second}},
		},
	}
}

// create makes the app's namespace, policies, Deployment, Service and
// budget, and waits until its pods are Ready. It returns the Service's
// URL ("" when not served).
func (a *app) create(ctx context.Context, c client.Client) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: a.namespace}}
	if err := c.Create(ctx, ns); err != nil {
		return "", fmt.Errorf("create namespace %s: %w", a.namespace, err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Namespace: a.namespace, Name: "default"}, &corev1.ServiceAccount{}) == nil, nil
	}); err != nil {
		return "", fmt.Errorf("namespace %s: no default ServiceAccount: %w", a.namespace, err)
	}
	for _, p := range a.policies {
		p = p.DeepCopy()
		p.Namespace = a.namespace
		if err := c.Create(ctx, p); err != nil {
			return "", fmt.Errorf("create policy %s/%s: %w", a.namespace, p.Name, err)
		}
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got := &v1alpha1.RecreatePolicy{}
			return c.Get(ctx, client.ObjectKeyFromObject(p), got) == nil && got.Status.ObservedGeneration == got.Generation, nil
		}); err != nil {
			return "", fmt.Errorf("policy %s/%s: the manager has not seen it: %w", a.namespace, p.Name, err)
		}
	}
	labels := map[string]string{"app": a.name}
	if err := c.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: a.namespace, Name: a.name},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(a.replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: a.podSpec()},
		},
	}); err != nil {
		return "", fmt.Errorf("create deployment %s/%s: %w", a.namespace, a.name, err)
	}
	if a.budget != nil {
		if err := c.Create(ctx, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Namespace: a.namespace, Name: a.name},
			Spec: policyv1.PodDisruptionBudgetSpec{
				Selector:       &metav1.LabelSelector{MatchLabels: labels},
				MaxUnavailable: a.budget,
			},
		}); err != nil {
			return "", fmt.Errorf("create budget %s/%s: %w", a.namespace, a.name, err)
		}
	}
	url := ""
	if a.served {
		svc := &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: a.namespace, Name: a.name},
			Spec: corev1.ServiceSpec{
				Selector: labels,
				Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
			},
		}
		if err := c.Create(ctx, svc); err != nil {
			return "", fmt.Errorf("create service %s/%s: %w", a.namespace, a.name, err)
		}
		url = fmt.Sprintf("http://%s/", svc.Spec.ClusterIP)
	}
	return url, a.waitReady(ctx, c)
}

// podSpec is testapp with a readiness probe every second, a short grace,
// spread over the nodes.
func (a *app) podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: new(int64(2)),
		TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{
			MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": a.name}},
		}},
		Containers: []corev1.Container{{
			Name:  "app",
			Image: images.TestApp.Ref(),
			Args:  a.args,
			Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
			ReadinessProbe: &corev1.Probe{
				ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}},
				PeriodSeconds:    1,
				FailureThreshold: 1,
			},
		}},
	}
}

// waitReady waits up to two minutes until the app has its replicas, all
// Ready.
func (a *app) waitReady(ctx context.Context, c client.Client) error {
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		d := &appsv1.Deployment{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: a.namespace, Name: a.name}, d); err != nil {
			return false, nil
		}
		return d.Status.ReadyReplicas == *d.Spec.Replicas && d.Status.Replicas == *d.Spec.Replicas, nil
	})
	if err != nil {
		return fmt.Errorf("deployment %s/%s: its pods are not all Ready within 2m", a.namespace, a.name)
	}
	return nil
}

// removeEarlier deletes the namespaces an earlier run left and waits for
// them to go.
func removeEarlier(ctx context.Context, c client.Client) error {
	list := &corev1.NamespaceList{}
	if err := c.List(ctx, list); err != nil {
		return fmt.Errorf("list namespaces: %w", err)
	}
	var left []string
	for _, ns := range list.Items {
		if strings.HasPrefix(ns.Name, namespacePrefix) {
			if err := c.Delete(ctx, &ns); client.IgnoreNotFound(err) != nil {
				return fmt.Errorf("delete namespace %s: %w", ns.Name, err)
			}
			left = append(left, ns.Name)
		}
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range left {
			if c.Get(ctx, client.ObjectKey{Name: name}, &corev1.Namespace{}) == nil {
				return false, nil
			}
		}
		return true, nil
	})
}
