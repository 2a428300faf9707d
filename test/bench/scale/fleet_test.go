package scale

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// The fleet: in each of sizing.namespaces namespaces (scale-000, ...),
// deploymentsPerNamespace Deployments of ordinary pods on the simulated
// nodes and one RecreatePolicy selecting them all.
const (
	fleetLabel              = "rejuv.dev/bench"
	fleetValue              = "scale"
	deploymentsPerNamespace = 10
)

func fleetNamespace(i int) string { return fmt.Sprintf("scale-%03d", i) }

// isFleetNamespace says whether ns is one of the fleet's namespaces.
func isFleetNamespace(ns string) bool {
	var i int
	_, err := fmt.Sscanf(ns, "scale-%03d", &i)
	return err == nil && ns == fleetNamespace(i) && i < sizing.namespaces
}

// fleetPolicy is namespace i's policy: stuck readiness, a restart storm,
// a memory leak (whose signal the simulated pods never have: the policy
// reports no data) or a nightly rolling restart, in turn.
func fleetPolicy(i int) *v1alpha1.RecreatePolicy {
	p := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: fleetNamespace(i), Name: "heal"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{fleetLabel: fleetValue}},
			Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("10%"))},
		},
	}
	switch i % 4 {
	case 0:
		p.Spec.Rules = []v1alpha1.Rule{{Name: "stuck", Builtin: "stuck-readiness"}}
	case 1:
		p.Spec.Rules = []v1alpha1.Rule{{Name: "storm", Builtin: "restart-storm"}}
	case 2:
		p.Spec.Rules = []v1alpha1.Rule{{Name: "leak", Builtin: "memory-leak"}}
	default:
		p.Spec.Schedule = &v1alpha1.Schedule{Cron: "0 3 * * *"}
	}
	return p
}

// fleetDeployment is an ordinary web service's Deployment: an app and a
// log shipper, a dozen environment variables, probes, resources, a
// preStop hook, a ConfigMap and an emptyDir, on the simulated nodes.
func fleetDeployment(ns string, j int, replicas int32) *appsv1.Deployment {
	name := fmt.Sprintf("svc-%02d", j)
	labels := map[string]string{"app": name, "tier": "web", fleetLabel: fleetValue}
	env := []corev1.EnvVar{
		{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
		{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}},
	}
	for k, v := range map[string]string{
		"LOG_LEVEL": "info", "LOG_FORMAT": "json", "HTTP_PORT": "8080", "METRICS_PORT": "9090",
		"DB_HOST": "postgres.data.svc", "DB_POOL_SIZE": "20", "CACHE_URL": "redis://redis.data.svc:6379",
		"FEATURE_FLAGS": "checkout-v2,search-ranking", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://otel-collector.observability.svc:4317",
	} {
		env = append(env, corev1.EnvVar{Name: k, Value: v})
	}
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("http")}}, PeriodSeconds: period}
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{
					"prometheus.io/scrape": "true", "prometheus.io/port": "9090", "kubectl.kubernetes.io/default-container": "app",
				}},
				Spec: corev1.PodSpec{
					NodeSelector:                  harness.KwokNodeSelector,
					Tolerations:                   []corev1.Toleration{harness.KwokToleration},
					TerminationGracePeriodSeconds: new(int64(30)),
					Containers: []corev1.Container{{
						Name: "app", Image: "registry.example/shop/" + name + ":1.4.2",
						Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 9090}},
						Env:   env,
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("256Mi")},
						},
						ReadinessProbe: probe("/readyz", 5), LivenessProbe: probe("/healthz", 10), StartupProbe: probe("/readyz", 2),
						Lifecycle:    &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/app"}, {Name: "cache", MountPath: "/var/cache/app"}},
					}, {
						Name: "log-shipper", Image: "registry.example/infra/fluent-bit:3.1",
						Env: []corev1.EnvVar{{Name: "FLUENT_HOST", Value: "logs.observability.svc"}, {Name: "FLUENT_PORT", Value: "24224"}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")},
						},
						VolumeMounts: []corev1.VolumeMount{{Name: "cache", MountPath: "/var/cache/app", ReadOnly: true}},
					}},
					Volumes: []corev1.Volume{
						{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name + "-config"}, Optional: new(true)}}},
						{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
}

// replicasFor spreads pods over namespaces × deploymentsPerNamespace
// Deployments, as evenly as it divides.
func replicasFor(pods, namespaces int) [][]int32 {
	slots := namespaces * deploymentsPerNamespace
	out := make([][]int32, namespaces)
	for i := range out {
		out[i] = make([]int32, deploymentsPerNamespace)
		for j := range out[i] {
			k := i*deploymentsPerNamespace + j
			out[i][j] = int32(pods / slots)
			if k < pods%slots {
				out[i][j]++
			}
		}
	}
	return out
}

// scaleFleet creates or scales the fleet to pods pods and waits until
// they all run (kwok makes them Running and Ready).
func scaleFleet(ctx context.Context, pods int) error {
	// Namespaces in parallel, as many clients' deploys would come: one at
	// a time, the benchmark waits on its own round trips.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i, counts := range replicasFor(pods, sizing.namespaces) {
		g.Go(func() error { return scaleNamespace(gctx, i, counts) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	running := 0
	err := wait.PollUntilContextTimeout(ctx, 5*time.Second, 30*time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := countRunning(ctx)
		if err != nil {
			return false, nil
		}
		running = n
		return n == pods, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %d fleet pods to run (%d do): %w", pods, running, err)
	}
	return nil
}

// scaleNamespace creates namespace i, its policy when missing and its
// Deployments with counts replicas, or scales those that exist.
func scaleNamespace(ctx context.Context, i int, counts []int32) error {
	return ensureNamespace(ctx, fleetNamespace(i), fleetPolicy(i), counts)
}

// ensureNamespace creates namespace ns, policy p when missing and the
// fleet's Deployments with counts replicas, or scales those that exist.
func ensureNamespace(ctx context.Context, ns string, p *v1alpha1.RecreatePolicy, counts []int32) error {
	kube := fleet
	// Opted out of the readiness gate: the stand-in executor simulates no
	// gate (it sets Ready from the containers alone) and waits no grace.
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{v1beta1.ReadinessGateNamespaceLabel: "disabled"}}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, namespace, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", ns, err)
	}
	// Only when missing: a create goes through Rejuv's webhook, which
	// does not answer while the manager is being OOM-killed, and the
	// benchmark is there to measure that, not to stop at it.
	if err := stack.Client.Get(ctx, client.ObjectKeyFromObject(p), &v1alpha1.RecreatePolicy{}); apierrors.IsNotFound(err) {
		if err := stack.Client.Create(ctx, p); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create the policy of %s: %w", ns, err)
		}
	}
	for j, n := range counts {
		d := fleetDeployment(ns, j, n)
		_, err := kube.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
			_, err = kube.AppsV1().Deployments(ns).Patch(ctx, d.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		}
		if err != nil {
			return fmt.Errorf("deployment %s/%s with %d replicas: %w", ns, d.Name, n, err)
		}
	}
	return nil
}

// workload creates namespace ns with policy p and Deployments of counts
// replicas (as the fleet's namespaces are), and waits until their pods all
// run and are Ready.
func workload(ctx context.Context, ns string, p *v1alpha1.RecreatePolicy, counts []int32) error {
	if err := ensureNamespace(ctx, ns, p, counts); err != nil {
		return err
	}
	want := int32(0)
	for _, n := range counts {
		want += n
	}
	ready := 0
	// why counts, by what the pods' conditions say, those not ready.
	why := map[string]int{}
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := fleet.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		ready, why = 0, map[string]int{}
		for i := range list.Items {
			p := &list.Items[i]
			if c := pods.Condition(p, corev1.PodReady); c != nil && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil {
				ready++
				continue
			}
			why[notReadyReason(p)]++
		}
		return ready == int(want), nil
	})
	if err != nil {
		return fmt.Errorf("wait for the %d pods of %s to be ready (%d are; the others: %v): %w", want, ns, ready, why, err)
	}
	return nil
}

// notReadyReason says why a pod is not ready: its phase, node and the
// first condition that is not True.
func notReadyReason(p *corev1.Pod) string {
	reason := fmt.Sprintf("%s on %q", p.Status.Phase, p.Spec.NodeName)
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			return fmt.Sprintf("%s: %s %s %s", reason, c.Type, c.Reason, c.Message)
		}
	}
	return reason
}

// countRunning counts the fleet's pods that run and are not being
// deleted, a page at a time.
func countRunning(ctx context.Context) (int, error) {
	n := 0
	opts := metav1.ListOptions{LabelSelector: fleetLabel + "=" + fleetValue, Limit: 2000}
	for {
		pods, err := fleet.CoreV1().Pods("").List(ctx, opts)
		if err != nil {
			return 0, err
		}
		for _, p := range pods.Items {
			// The reaction's and the rolling restart's pods carry the
			// label too, in namespaces of their own.
			if isFleetNamespace(p.Namespace) && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
				n++
			}
		}
		if pods.Continue == "" {
			return n, nil
		}
		opts.Continue = pods.Continue
	}
}

// removeFleet deletes the fleet's namespaces, and those of the reaction
// and the rolling restart, and waits until they are gone.
func removeFleet(ctx context.Context) error {
	names := []string{reactNamespace, rollingNamespace, adversarialNamespace}
	for i := range sizing.namespaces {
		names = append(names, fleetNamespace(i))
	}
	return removeNamespaces(ctx, names...)
}

// removeNamespaces empties the namespaces and deletes them, all at once,
// and waits until they are gone. A namespace deleted with its workloads
// in it goes slowly: the ReplicaSet controller tries to recreate each pod
// the namespace controller deletes (the API server refuses, in a
// terminating namespace), and the namespace controller's one call that
// deletes a thousand pods outlasted the API server's minute: the two
// removals of a run at 1,000 pods took 190 s of its 452 (now 97 of 399).
func removeNamespaces(ctx context.Context, names ...string) error {
	var errs []error
	var emptied errgroup.Group
	for _, ns := range names {
		emptied.Go(func() error { return emptyNamespace(ctx, ns) })
	}
	if err := emptied.Wait(); err != nil {
		errs = append(errs, err)
	}
	for _, ns := range names {
		if err := fleet.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete namespace %s: %w", ns, err))
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, ns := range names {
			if _, err := fleet.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("wait for namespaces %v to go: %w", names, err))
	}
	return errors.Join(errs...)
}

// emptyNamespace deletes a fleet namespace's Deployments and ReplicaSets,
// then its pods, each with no grace (nothing runs a simulated pod), a
// few at a time.
func emptyNamespace(ctx context.Context, ns string) error {
	background := metav1.DeletePropagationBackground
	owners := metav1.DeleteOptions{PropagationPolicy: &background}
	if err := fleet.AppsV1().Deployments(ns).DeleteCollection(ctx, owners, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the Deployments of %s: %w", ns, err)
	}
	if err := fleet.AppsV1().ReplicaSets(ns).DeleteCollection(ctx, owners, metav1.ListOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the ReplicaSets of %s: %w", ns, err)
	}
	list, err := fleet.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list the pods of %s: %w", ns, err)
	}
	var g errgroup.Group
	g.SetLimit(8)
	for _, p := range list.Items {
		g.Go(func() error {
			err := fleet.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
			if err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("delete pod %s/%s: %w", ns, p.Name, err)
			}
			return nil
		})
	}
	return g.Wait()
}
