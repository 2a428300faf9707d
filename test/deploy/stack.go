package deploy

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps"
	apipods "github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// What config/default installs, by the names it gives.
const (
	Namespace        = "rejuv-system"
	HealerDeployment = "rejuv-healer"
	DaemonSet        = "rejuv-daemon"
	// HealerSelector and DaemonSelector select the manager's and the
	// daemon's pods.
	HealerSelector = "app.kubernetes.io/name=rejuv-healer"
	DaemonSelector = "app.kubernetes.io/name=rejuv-daemon"
	// LeaseName is the manager's leader-election lease.
	LeaseName = "rejuv-healer.rejuv.dev"
)

// Client returns a client for the cluster that knows Rejuv's types.
func Client(c *harness.Cluster) (client.Client, error) {
	return WatchClient(c)
}

// WatchClient is Client that can watch as well.
func WatchClient(c *harness.Cluster) (client.WithWatch, error) {
	s, err := apps.NewScheme()
	if err == nil {
		err = rejuv.AddToScheme(s)
	}
	if err != nil {
		return nil, err
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return client.NewWithWatch(cfg, client.Options{Scheme: s})
}

// Stack is Rejuv installed on the cluster.
type Stack struct {
	Client  client.Client
	Kube    kubernetes.Interface
	cluster *harness.Cluster
	// kustomization is the directory Install applied: Options'
	// Kustomization with Rejuv's images from the cluster's registry.
	kustomization string
	// Images are the images Install pushed.
	Images Pushed
	// scraperMu guards scraper, which parallel tests make on first use.
	scraperMu sync.Mutex
	scraper   *scraper
}

// Options say what Install applies and what it does with a Rejuv that is
// installed already.
type Options struct {
	// Kustomization is the directory applied, relative to the repository;
	// empty is test/deploy/overlay (config/default with the tests' short
	// pickup timeout).
	Kustomization string
	// Keep keeps a Rejuv installed already, and everything it holds
	// (policies, requests); its pods are replaced when the images just
	// built differ from theirs. Otherwise it is removed first.
	Keep bool
}

// Install builds Rejuv's images, pushes them to the cluster's registry and
// applies the kustomization with kubectl, pulling them from there by digest
// (see Pushed.Kustomization), as a user would, then waits until the
// manager's replicas and the daemon are ready and the webhooks answer
// through their Service.
func Install(ctx context.Context, cluster *harness.Cluster, o Options) (*Stack, error) {
	s, err := Attach(cluster)
	if err != nil {
		return nil, err
	}
	root, err := harness.RepoRoot()
	if err != nil {
		return nil, err
	}
	if o.Kustomization == "" {
		o.Kustomization = filepath.Join("test", "deploy", "overlay")
	}
	if s.Images, err = PushImages(ctx, cluster); err != nil {
		return nil, err
	}
	s.kustomization = filepath.Join(cluster.Config.Dir, "installs", strings.ReplaceAll(filepath.Clean(o.Kustomization), string(filepath.Separator), "-"))
	if err := s.Images.Kustomization(s.kustomization, filepath.Join(root, o.Kustomization)); err != nil {
		return nil, err
	}
	_, err = s.Kube.CoreV1().Namespaces().Get(ctx, Namespace, metav1.GetOptions{})
	installed := err == nil
	if installed && !o.Keep {
		if err := s.Uninstall(ctx); err != nil {
			return nil, fmt.Errorf("remove the Rejuv installed before: %w", err)
		}
	}
	if err := s.putWebhookClientCA(ctx); err != nil {
		return nil, err
	}
	if out, err := s.Kubectl(ctx, "apply", "--server-side", "-k", s.kustomization); err != nil {
		return nil, fmt.Errorf("install Rejuv: %w\n%s", err, out)
	}
	if err := s.WaitReady(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Attach returns the Stack of a Rejuv installed already, by Install or by
// other means (the single install file, Helm), with config/default's
// names; only Install's Stack can Uninstall.
func Attach(cluster *harness.Cluster) (*Stack, error) {
	c, err := Client(cluster)
	if err != nil {
		return nil, err
	}
	kube, err := cluster.Clientset()
	if err != nil {
		return nil, err
	}
	return &Stack{Client: c, Kube: kube, cluster: cluster}, nil
}

// WaitReady waits until every replica of the manager and the daemon is
// updated and ready, and the manager's webhooks answer.
func (s *Stack) WaitReady(ctx context.Context) error {
	return s.waitReady(ctx, true)
}

// WaitManagerReady is WaitReady for an install without Rejuv's daemon
// (config/openkruise).
func (s *Stack) WaitManagerReady(ctx context.Context) error {
	return s.waitReady(ctx, false)
}

func (s *Stack) waitReady(ctx context.Context, daemon bool) error {
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := s.Kube.AppsV1().Deployments(Namespace).Get(ctx, HealerDeployment, metav1.GetOptions{})
		if err != nil || !deploymentReady(d) {
			return false, nil
		}
		if !daemon {
			return true, nil
		}
		ds, err := s.Kube.AppsV1().DaemonSets(Namespace).Get(ctx, DaemonSet, metav1.GetOptions{})
		return err == nil && daemonSetReady(ds), nil
	})
	if err != nil {
		return fmt.Errorf("wait for Rejuv's pods to be ready: %w\n%s", err, s.Describe(context.WithoutCancel(ctx)))
	}
	// Ready pods serve; the API server reaches them once the Service's
	// endpoints are the ready pods' (a replaced replica's address answers
	// "no route to host") and kube-proxy has them. A policy created as a
	// dry run goes through the validating webhook; the Service picks an
	// endpoint at random, so it has to answer several times in a row.
	var last error
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if last = s.webhookEndpointsCurrent(ctx); last != nil {
			return false, nil
		}
		for range webhookProbes {
			if last = s.Client.Create(ctx, probePolicy(), client.DryRunAll); last != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for Rejuv's webhooks to answer: %w (last: %w)", err, last)
	}
	return nil
}

// WebhookService is the Service the API server calls Rejuv's webhooks
// through.
const WebhookService = "rejuv-webhook-service"

// webhookProbes is how many dry runs in a row must reach the webhooks.
const webhookProbes = 5

// webhookEndpointsCurrent says why the webhook Service's endpoints are not
// (yet) exactly the ready manager pods' addresses, or nil.
func (s *Stack) webhookEndpointsCurrent(ctx context.Context) error {
	pods, err := s.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: HealerSelector})
	if err != nil {
		return fmt.Errorf("list the manager's pods: %w", err)
	}
	want := map[string]bool{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil && p.Status.PodIP != "" && apipods.Ready(&p) {
			want[p.Status.PodIP] = true
		}
	}
	endpoints, err := s.Kube.DiscoveryV1().EndpointSlices(Namespace).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + WebhookService})
	if err != nil {
		return fmt.Errorf("list the endpoints of Service %s: %w", WebhookService, err)
	}
	got := map[string]bool{}
	for _, sl := range endpoints.Items {
		for _, e := range sl.Endpoints {
			ready := e.Conditions.Ready == nil || *e.Conditions.Ready
			terminating := e.Conditions.Terminating != nil && *e.Conditions.Terminating
			for _, addr := range e.Addresses {
				if !ready || terminating {
					return fmt.Errorf("service %s still lists %s, not ready or terminating", WebhookService, addr)
				}
				got[addr] = true
			}
		}
	}
	if len(want) == 0 || !maps.Equal(want, got) {
		return fmt.Errorf("service %s lists %v, the ready manager pods are %v", WebhookService, sortedKeys(got), sortedKeys(want))
	}
	return nil
}

// sortedKeys are the addresses of a set, sorted, for messages.
func sortedKeys(m map[string]bool) []string {
	return slices.Sorted(maps.Keys(m))
}

func probePolicy() *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespaceDefault, Name: "rejuv-install-probe"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"rejuv.dev/install-probe": "none"}},
			Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"},
		},
	}
}

func deploymentReady(d *appsv1.Deployment) bool {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	st := d.Status
	return st.ObservedGeneration >= d.Generation && st.UpdatedReplicas == want && st.ReadyReplicas == want && st.Replicas == want
}

func daemonSetReady(ds *appsv1.DaemonSet) bool {
	st := ds.Status
	return st.ObservedGeneration >= ds.Generation && st.DesiredNumberScheduled > 0 &&
		st.UpdatedNumberScheduled == st.DesiredNumberScheduled && st.NumberReady == st.DesiredNumberScheduled
}

// Uninstall deletes what Install applied and waits until it is gone.
func (s *Stack) Uninstall(ctx context.Context) error {
	var errs []error
	s.scraperMu.Lock()
	if s.scraper != nil {
		errs = append(errs, s.scraper.remove(ctx, s.Kube))
		s.scraper = nil
	}
	s.scraperMu.Unlock()
	if out, err := s.Kubectl(ctx, "delete", "-k", s.kustomization, "--ignore-not-found", "--wait", "--timeout=3m"); err != nil {
		errs = append(errs, fmt.Errorf("uninstall Rejuv: %w\n%s", err, out))
	}
	return errors.Join(errs...)
}

// Kubectl runs the cluster's kubectl (the Kubernetes version the harness
// runs) with the admin kubeconfig and returns its combined output.
func (s *Stack) Kubectl(ctx context.Context, args ...string) (string, error) {
	return Kubectl(ctx, s.cluster, args...)
}

// Kubectl runs the cluster's kubectl with the admin kubeconfig.
func Kubectl(ctx context.Context, cluster *harness.Cluster, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, cluster.Config.KubeBinary("kubectl"), append([]string{"--kubeconfig", cluster.Kubeconfig()}, args...)...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Pods lists the pods of a selector in Rejuv's namespace, oldest first,
// without the ones being deleted.
func (s *Stack) Pods(ctx context.Context, selector string) ([]corev1.Pod, error) {
	list, err := s.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, err
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out, nil
}

// DaemonPod is the daemon pod of the named node.
func (s *Stack) DaemonPod(ctx context.Context, node string) (*corev1.Pod, error) {
	pods, err := s.Pods(ctx, DaemonSelector)
	if err != nil {
		return nil, err
	}
	var on []corev1.Pod
	for _, p := range pods {
		if p.Spec.NodeName == node {
			on = append(on, p)
		}
	}
	if len(on) != 1 {
		return nil, fmt.Errorf("%d daemon pods on node %s, want 1", len(on), node)
	}
	return &on[0], nil
}

// Leader is the manager pod that holds the leader-election lease. A read
// that fails is tried again for up to leaderReadTimeout: an API server
// loaded by thousands of simulated pods (bench-scale) once answered
// NotFound for the lease between two reads of it seconds apart.
func (s *Stack) Leader(ctx context.Context) (*corev1.Pod, error) {
	var pod *corev1.Pod
	var last error
	err := wait.PollUntilContextTimeout(ctx, time.Second, leaderReadTimeout, true, func(ctx context.Context) (bool, error) {
		lease, err := s.Kube.CoordinationV1().Leases(Namespace).Get(ctx, LeaseName, metav1.GetOptions{})
		if err != nil {
			last = fmt.Errorf("read the leader lease: %w", err)
			return false, nil
		}
		if lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
			return false, errors.New("nobody holds the leader lease")
		}
		// controller-runtime's identity is POD_UUID.
		name, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
		if pod, err = s.Kube.CoreV1().Pods(Namespace).Get(ctx, name, metav1.GetOptions{}); err != nil {
			last = fmt.Errorf("read the leader %s: %w", name, err)
			return false, nil
		}
		return true, nil
	})
	switch {
	case err == nil:
		return pod, nil
	case wait.Interrupted(err) && last != nil:
		return nil, fmt.Errorf("%w (tried for %s)", last, leaderReadTimeout)
	default:
		return nil, err
	}
}

// leaderReadTimeout is how long Leader tries to read the lease and its
// holder's pod.
const leaderReadTimeout = 20 * time.Second

// Logs returns the log of a pod's only container (previous: of the
// container before its last restart).
func (s *Stack) Logs(ctx context.Context, pod string, previous bool) (string, error) {
	b, err := s.Kube.CoreV1().Pods(Namespace).GetLogs(pod, &corev1.PodLogOptions{Previous: previous}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("read the log of %s/%s: %w", Namespace, pod, err)
	}
	return string(b), nil
}

// Kill deletes a pod at once (no grace), as a node losing it would.
func (s *Stack) Kill(ctx context.Context, pod string) error {
	err := s.Kube.CoreV1().Pods(Namespace).Delete(ctx, pod, metav1.DeleteOptions{GracePeriodSeconds: new(int64(0))})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// Describe summarises the stack's pods, with the end of each one's log,
// for a failing test's output.
func (s *Stack) Describe(ctx context.Context) string {
	var b strings.Builder
	for _, sel := range []string{HealerSelector, DaemonSelector} {
		pods, err := s.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			fmt.Fprintf(&b, "list %s: %v\n", sel, err)
			continue
		}
		for _, p := range pods.Items {
			fmt.Fprintf(&b, "---- pod %s (%s", p.Name, p.Status.Phase)
			for _, cs := range p.Status.ContainerStatuses {
				fmt.Fprintf(&b, ", %s ready=%t restarts=%d", cs.Name, cs.Ready, cs.RestartCount)
				if w := cs.State.Waiting; w != nil {
					fmt.Fprintf(&b, " waiting %s: %s", w.Reason, w.Message)
				}
			}
			b.WriteString(")\n")
			log, err := s.Logs(ctx, p.Name, false)
			if err != nil {
				log = err.Error()
			}
			b.WriteString(TailLines(log, 30) + "\n")
		}
	}
	return b.String()
}

// TailLines returns the last n lines of s.
func TailLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
