package harness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Simulated nodes carry this label (value SimulatedKwok) and a NoSchedule
// taint of the same key: only pods that ask for them land there, and
// DaemonSets that select kubernetes.io/os=linux (Rejuv's daemon) do not,
// as the nodes do not carry that label.
const (
	SimulatedLabel = "rejuv.dev/simulated"
	SimulatedKwok  = "kwok"
)

// KwokOptions says how many simulated nodes kwok plays.
type KwokOptions struct {
	Nodes int
	// PodCIDR is where the simulated pods' addresses come from; it must
	// not overlap the cluster's own ranges. Default 10.224.0.0/12.
	PodCIDR string
}

// Kwok is kwok (sigs.k8s.io/kwok), run on the host beside the cluster,
// playing the kubelets of simulated nodes: it keeps them Ready (their
// leases renewed) and makes the pods bound to them Running and Ready
// without running anything (kwokStages), so that a benchmark can have
// thousands of pods on one machine. Nodes are the simulated nodes' names.
type Kwok struct {
	Nodes []string
	cmd   *exec.Cmd
	done  chan struct{}
	dir   string
	kube  kubernetes.Interface
}

// StartKwok builds kwok once (EnsureKwok), creates the simulated nodes
// (kwok-0000, kwok-0001, ...; existing ones are kept), starts kwok on them
// and waits until every one is Ready. Stop ends it and deletes the nodes.
func (c *Cluster) StartKwok(ctx context.Context, o KwokOptions) (*Kwok, error) {
	if o.PodCIDR == "" {
		o.PodCIDR = "10.224.0.0/12"
	}
	bin, err := EnsureKwok(ctx)
	if err != nil {
		return nil, err
	}
	rc, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	kube, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(c.Config.path("kwok"), 0o755); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(c.Config.path("kwok"), "run-")
	if err != nil {
		return nil, fmt.Errorf("create kwok's directory: %w", err)
	}
	stages := filepath.Join(dir, "stages.yaml")
	if err := os.WriteFile(stages, []byte(kwokStages), 0o644); err != nil {
		return nil, err
	}
	k := &Kwok{dir: dir, kube: kube, done: make(chan struct{})}
	for i := range o.Nodes {
		k.Nodes = append(k.Nodes, fmt.Sprintf("kwok-%04d", i))
	}
	// A run stopped before it could clean up leaves leases of these
	// names, held by its kwok: the new kwok would not take the nodes
	// over until they expired.
	if err := k.deleteLeases(ctx); err != nil {
		return nil, err
	}
	if err := k.createNodes(ctx); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "kwok.log"))
	if err != nil {
		return nil, err
	}
	// 127.0.0.2 as the nodes' address: nothing listens there, so a call
	// to a simulated kubelet (metrics-server's scrape, kubectl logs) is
	// refused at once rather than left to time out.
	k.cmd = exec.Command(bin, "--kubeconfig="+c.Config.Kubeconfig(), "--config="+stages,
		"--manage-nodes-with-label-selector="+SimulatedLabel+"="+SimulatedKwok,
		"--node-ip=127.0.0.2", "--cidr="+o.PodCIDR, "--node-lease-duration-seconds=40")
	k.cmd.Stdout, k.cmd.Stderr = log, log
	if err := k.cmd.Start(); err != nil {
		_ = log.Close()
		return nil, fmt.Errorf("start kwok: %w", err)
	}
	go func() {
		_ = k.cmd.Wait()
		_ = log.Close()
		close(k.done)
	}()
	if err := k.waitNodesReady(ctx); err != nil {
		out, _ := os.ReadFile(log.Name())
		_ = k.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("%w; kwok's log ends:\n%s", err, tail(string(out), 20))
	}
	return k, nil
}

// KwokNodeSelector and KwokToleration put a pod on the simulated nodes.
var (
	KwokNodeSelector = map[string]string{SimulatedLabel: SimulatedKwok}
	KwokToleration   = corev1.Toleration{Key: SimulatedLabel, Operator: corev1.TolerationOpEqual, Value: SimulatedKwok, Effect: corev1.TaintEffectNoSchedule}
)

func (k *Kwok) createNodes(ctx context.Context) error {
	for _, name := range k.Nodes {
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				SimulatedLabel: SimulatedKwok, corev1.LabelHostname: name,
			}},
			Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: SimulatedLabel, Value: SimulatedKwok, Effect: corev1.TaintEffectNoSchedule}}},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("250")},
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("250")},
			},
		}
		if _, err := k.kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create simulated node %s: %w", name, err)
		}
	}
	return nil
}

func (k *Kwok) waitNodesReady(ctx context.Context) error {
	var notReady int
	err := wait.PollUntilContextTimeout(ctx, time.Second, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-k.done:
			return false, errors.New("kwok exited")
		default:
		}
		nodes, err := k.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: SimulatedLabel + "=" + SimulatedKwok})
		if err != nil {
			return false, nil
		}
		notReady = len(k.Nodes)
		for _, n := range nodes.Items {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					notReady--
				}
			}
		}
		return notReady <= 0, nil
	})
	if err != nil {
		return fmt.Errorf("wait for %d simulated nodes to be Ready (%d are not): %w", len(k.Nodes), notReady, err)
	}
	return nil
}

// Stop deletes the simulated nodes, then ends kwok and removes its
// directory. Pods still bound to the nodes are left to the cluster's pod
// garbage collector: delete them first.
func (k *Kwok) Stop(ctx context.Context) error {
	var errs []error
	for _, name := range k.Nodes {
		if err := k.kube.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete simulated node %s: %w", name, err))
		}
	}
	if k.cmd != nil && k.cmd.Process != nil {
		_ = k.cmd.Process.Signal(os.Interrupt)
		select {
		case <-k.done:
		case <-time.After(10 * time.Second):
			_ = k.cmd.Process.Kill()
			<-k.done
		}
	}
	// The garbage collector would delete the nodes' leases in its own
	// time; a next run on the same names must not find them.
	if err := k.deleteLeases(ctx); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(k.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// deleteLeases deletes the node leases of the simulated nodes' names and
// waits until they are gone.
func (k *Kwok) deleteLeases(ctx context.Context) error {
	leases := k.kube.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	for _, name := range k.Nodes {
		if err := leases.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete the node lease %s: %w", name, err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		list, err := leases.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, l := range list.Items {
			if slices.Contains(k.Nodes, l.Name) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the simulated nodes' leases to go: %w", err)
	}
	return nil
}
