package scale

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// The adversarial namespace: at each size, 1% of the fleet's pods (one at
// least) whose authors chose the largest values the API server and Rejuv
// accept, each pod its own (as pods of many owners would be: nothing to
// share), with a policy selecting them, and a request made by hand for
// each at the most a request may take. The benchmark measures what they
// cost each manager replica on top of the fleet, and removes them before
// the next size.
//
// A pod: annotations of maxAnnotationsBytes in all (the API server's
// limit is 256 KiB; Rejuv keeps pods.MaxKeptAnnotationsBytes of them),
// each container's preStop command just under pods.MaxLifecycleBytes (kept
// whole), and a command of adversarialCommandBytes (not kept). A request:
// annotations that bring it near v1beta1.MaxAdmittedRequestBytes once the
// webhook has filled it in.
const (
	adversarialNamespace = "scale-adversarial"
	adversarialShare     = 100
	// adversarialBatch is how many adversarial pods are created at once.
	adversarialBatch        = 10
	maxAnnotationsBytes     = 250 << 10
	adversarialCommandBytes = 64 << 10
	// requestRoom is what a request's own annotation leaves of
	// MaxAdmittedRequestBytes for the rest of it (its spec as the webhook
	// fills it in, its preStop copied from the pod included).
	requestRoom = 6 << 10
)

// adversarialCost is what the adversarial namespace cost at one size.
type adversarialCost struct {
	pods int
	// podBytes and requestBytes are one pod's and one request's size as
	// JSON, as the API server holds them.
	podBytes, requestBytes int
	// before is the fleet's row at this size, with is the same size with
	// the adversarial namespace.
	before, with memoryRow
	// completed counts the requests that completed.
	completed int
}

// measureAdversarial adds the adversarial namespace to a fleet of fleetPods
// whose memory is before, waits until its pods run and its requests
// completed, lets it settle and measures the manager again.
func measureAdversarial(ctx context.Context, fleetPods int, before memoryRow) (adversarialCost, error) {
	cost := adversarialCost{pods: max(1, fleetPods/adversarialShare), before: before}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: adversarialNamespace, Labels: map[string]string{v1beta1.ReadinessGateNamespaceLabel: "disabled"}}}
	if _, err := fleet.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return cost, fmt.Errorf("create namespace %s: %w", adversarialNamespace, err)
	}
	policy := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: adversarialNamespace, Name: "heal"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{fleetLabel: fleetValue}},
			Rules:    []v1alpha1.Rule{{Name: "stuck", Builtin: "stuck-readiness"}},
			Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("10%"))},
		},
	}
	if err := stack.Client.Create(ctx, policy); err != nil && !apierrors.IsAlreadyExists(err) {
		return cost, fmt.Errorf("create the policy of %s: %w", adversarialNamespace, err)
	}
	// Created a batch at a time, each batch running before the next: at
	// 10,000 pods the loaded API server did not get 100 of them created
	// at once running within ten minutes, twice.
	created := make([]*corev1.Pod, cost.pods)
	for from := 0; from < cost.pods; from += adversarialBatch {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(8)
		for i := from; i < min(from+adversarialBatch, cost.pods); i++ {
			g.Go(func() error {
				p, err := fleet.CoreV1().Pods(adversarialNamespace).Create(gctx, adversarialPod(i), metav1.CreateOptions{})
				if err != nil {
					return fmt.Errorf("create adversarial pod %d: %w", i, err)
				}
				created[i] = p
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return cost, err
		}
		if err := waitRunning(ctx, adversarialNamespace, min(from+adversarialBatch, cost.pods)); err != nil {
			return cost, err
		}
	}
	cost.podBytes = jsonSize(created[0])
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	sizes := make([]int, cost.pods)
	for i, p := range created {
		g.Go(func() error {
			crr := adversarialRequest(i, p.Name)
			if err := stack.Client.Create(gctx, crr); err != nil {
				return fmt.Errorf("create the request for adversarial pod %s: %w", p.Name, err)
			}
			sizes[i] = jsonSize(crr)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return cost, err
	}
	cost.requestBytes = sizes[0]
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &v1beta1.ContainerRecreateRequestList{}
		if err := stack.Client.List(ctx, list, client.InNamespace(adversarialNamespace)); err != nil {
			return false, nil
		}
		cost.completed = 0
		for _, crr := range list.Items {
			if crr.Status.Phase == v1beta1.PhaseCompleted {
				cost.completed++
			}
		}
		return cost.completed >= cost.pods, nil
	})
	if err != nil {
		return cost, fmt.Errorf("wait for the %d adversarial requests to complete (%d did): %w", cost.pods, cost.completed, err)
	}
	time.Sleep(sizing.settle)
	cost.with, err = measureMemory(ctx, fleetPods+cost.pods)
	return cost, err
}

// adversarialPod is the i-th adversarial pod, on the simulated nodes.
func adversarialPod(i int) *corev1.Pod {
	r := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
	// Each annotation within what Rejuv keeps of one, and as many as the
	// API server takes.
	value := pods.MaxKeptAnnotationBytes - 64
	annotations := map[string]string{}
	for k := 0; (k+1)*(value+32) <= maxAnnotationsBytes; k++ {
		annotations[fmt.Sprintf("adversarial.example/a-%03d", k)] = randomText(r, value)
	}
	preStop := func() *corev1.Lifecycle {
		// The command's protobuf adds a few bytes a string and for the
		// handler: what is left of the bound.
		return &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
			Command: []string{"sh", "-c", randomText(r, pods.MaxLifecycleBytes-64)},
		}}}
	}
	container := func(name string) corev1.Container {
		return corev1.Container{
			Name: name, Image: fmt.Sprintf("registry.example/adversarial/%s-%d:1.0", name, i),
			Command:   []string{"sh", "-c", randomText(r, adversarialCommandBytes)},
			Lifecycle: preStop(),
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("16Mi")}},
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: fmt.Sprintf("fat-%04d", i), Namespace: adversarialNamespace,
			Labels:      map[string]string{fleetLabel: fleetValue, "app": "fat"},
			Annotations: annotations,
		},
		Spec: corev1.PodSpec{
			NodeSelector:                  harness.KwokNodeSelector,
			Tolerations:                   []corev1.Toleration{harness.KwokToleration},
			TerminationGracePeriodSeconds: new(int64(30)),
			Containers:                    []corev1.Container{container("app"), container("sidecar")},
		},
	}
}

// adversarialRequest is a request made by hand for pod's app container,
// its annotation as large as leaves the request within what the webhook
// admits.
func adversarialRequest(i int, pod string) *v1beta1.ContainerRecreateRequest {
	r := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
	return &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: adversarialNamespace, Name: "by-hand-" + pod,
			Annotations: map[string]string{"adversarial.example/notes": randomText(r, v1beta1.MaxAdmittedRequestBytes-requestRoom)},
		},
		Spec: v1beta1.ContainerRecreateRequestSpec{
			PodName:    pod,
			Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}},
		},
	}
}

// randomText is n random letters: no two pods share a value.
func randomText(r *rand.Rand, n int) string {
	const letters = "abcdefghijklmnopqrstuvwxyz"
	var b strings.Builder
	b.Grow(n)
	for range n {
		b.WriteByte(letters[r.IntN(len(letters))])
	}
	return b.String()
}

// jsonSize is an object's size as JSON.
func jsonSize(obj any) int {
	b, err := json.Marshal(obj)
	if err != nil {
		return 0
	}
	return len(b)
}

// waitRunning waits until n pods of namespace ns run. It lists them ten
// at a time (a hundred adversarial pods are about 30 MB of JSON, which a
// loaded API server may not send whole within a request's time) and, when
// they do not all run in time, says what it last saw: each phase's count,
// or the list's error.
func waitRunning(ctx context.Context, ns string, n int) error {
	var seen string
	var listErr error
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 10*time.Minute, true, func(ctx context.Context) (bool, error) {
		phases := map[corev1.PodPhase]int{}
		opts := metav1.ListOptions{Limit: 10}
		for {
			list, err := fleet.CoreV1().Pods(ns).List(ctx, opts)
			if err != nil {
				// The phases a list saw before are kept: the last list
				// is often the one the deadline cut.
				listErr = err
				return false, nil
			}
			for _, p := range list.Items {
				if p.DeletionTimestamp == nil {
					phases[p.Status.Phase]++
				}
			}
			if opts.Continue = list.Continue; opts.Continue == "" {
				break
			}
		}
		seen, listErr = fmt.Sprintf("phases %v", phases), nil
		return phases[corev1.PodRunning] == n, nil
	})
	if err != nil {
		if seen == "" {
			seen = "no list succeeded"
		}
		if listErr != nil {
			seen += fmt.Sprintf("; the last list failed: %v", listErr)
		}
		return fmt.Errorf("wait for the %d pods of %s to run (last seen: %s): %w", n, ns, seen, err)
	}
	return nil
}

// printAdversarial prints what the adversarial namespace cost at each
// size: each replica's memory with it, and a pod's share of the live heap
// against the fleet alone (its pod, its request and what Rejuv keeps for
// them).
func printAdversarial(costs []adversarialCost) {
	if len(costs) == 0 {
		return
	}
	c0 := costs[0]
	fmt.Printf("\nthe adversarial namespace: 1%% of the fleet, each pod %d KiB (annotations of %d KiB, each container's preStop near %d KiB, a command of %d KiB), each with a request of %d KiB made by hand\n",
		c0.podBytes>>10, maxAnnotationsBytes>>10, pods.MaxLifecycleBytes>>10, adversarialCommandBytes>>10, c0.requestBytes>>10)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "fleet pods\tadversarial pods\trequests completed\tleader RSS\tleader live heap\ta pod's share, leader\tstandby RSS\tstandby live heap\ta pod's share, standby\tdaemon RSS\tmanager restarts\t\n")
	for _, c := range costs {
		share := func(before, with float64) string {
			return fmt.Sprintf("%.1f KiB", (with-before)/float64(c.pods)/1024)
		}
		fmt.Fprintf(w, "%d\t%d\t%d\t%.0f MiB\t%.0f MiB\t%s\t%.0f MiB\t%.0f MiB\t%s\t%.0f MiB\t%d\t\n", c.before.pods, c.pods, c.completed,
			c.with.leader.rss/(1<<20), c.with.leader.live/(1<<20), share(c.before.leader.live, c.with.leader.live),
			c.with.standby.rss/(1<<20), c.with.standby.live/(1<<20), share(c.before.standby.live, c.with.standby.live),
			c.with.daemonRSS/(1<<20), c.with.restarts)
	}
	_ = w.Flush()
}
