package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"slices"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/soak/invariant"
)

// A fault is one kind of thing that breaks, with how to break it. inject
// breaks it, calls landed with what it hit once it has, holds it, heals
// it and returns once healed (the component is back, the rollout done).
// lock names what the fault holds alone: two faults with the same lock
// never overlap (one API server restart at a time; one fault per node).
type fault struct {
	kind   invariant.Fault
	lock   func(r *rand.Rand, f *faulter) string
	inject func(ctx context.Context, f *faulter, r *rand.Rand, lock string, landed func(target string)) error
}

// faulter injects faults at random moments until its deadline, several
// at once when their locks allow.
type faulter struct {
	cluster *harness.Cluster
	stack   *deploy.Stack
	sink    chan<- invariant.Observation
	log     func(format string, args ...any)

	mu     sync.Mutex
	held   map[string]bool
	nextID int
	failed map[invariant.Fault]int
}

// faults are every kind the soak injects.
func faults() []fault {
	return []fault{
		{kind: invariant.KillLeader, lock: fixed("manager-kill"), inject: killManager(true)},
		{kind: invariant.KillStandby, lock: fixed("manager-kill"), inject: killManager(false)},
		{kind: invariant.KillDaemon, lock: anyNode, inject: killDaemon},
		{kind: invariant.RestartContainerd, lock: anyNode, inject: restartOnNode(harness.ComponentContainerd)},
		{kind: invariant.RestartKubelet, lock: anyNode, inject: restartOnNode(harness.ComponentKubelet)},
		{kind: invariant.RestartAPIServer, lock: fixed("control-plane"), inject: restartAPIServer},
		{kind: invariant.PauseKubelet, lock: anyNode, inject: pauseKubelet},
		{kind: invariant.RolloutManager, lock: fixed("manager-rollout"), inject: rollout(true)},
		{kind: invariant.RolloutDaemon, lock: fixed("daemon-rollout"), inject: rollout(false)},
		{kind: invariant.WebhookUnreachable, lock: fixed("webhook-network"), inject: webhookUnreachable},
		{kind: invariant.SlowAPI, lock: fixed("control-plane"), inject: slowAPI},
		{kind: invariant.LoseNode, lock: notFirstNode, inject: loseNode},
	}
}

func fixed(name string) func(*rand.Rand, *faulter) string {
	return func(*rand.Rand, *faulter) string { return name }
}

// anyNode is a node no other fault holds, "" when none is free.
func anyNode(r *rand.Rand, f *faulter) string {
	return f.freeNode(r, f.cluster.Nodes())
}

// notFirstNode is a node other than the first (whose loss would take the
// machine's registry address with it) that no other fault holds.
func notFirstNode(r *rand.Rand, f *faulter) string {
	return f.freeNode(r, f.cluster.Nodes()[1:])
}

func (f *faulter) freeNode(r *rand.Rand, nodes []harness.Node) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var free []string
	for _, n := range nodes {
		if !f.held[n.Name] {
			free = append(free, n.Name)
		}
	}
	if len(free) == 0 {
		return ""
	}
	return free[r.IntN(len(free))]
}

// run injects a fault every gap on average (between half and one and a
// half of it) until deadline, then waits until every fault is healed.
// The faults' kinds are drawn in turn from a shuffled list of all, so that
// every kind comes up as often.
func (f *faulter) run(ctx context.Context, r *rand.Rand, gap time.Duration, deadline time.Time) {
	all := faults()
	var bag []fault
	var running sync.WaitGroup
	defer running.Wait()
	for {
		wait := gap/2 + time.Duration(r.Int64N(int64(gap)))
		if time.Now().Add(wait).After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		if len(bag) == 0 {
			bag = slices.Clone(all)
			r.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
		}
		// The first kind in the bag whose lock is free.
		for i, flt := range bag {
			lock := flt.lock(r, f)
			if lock == "" || !f.take(lock) {
				continue
			}
			bag = slices.Delete(bag, i, i+1)
			seed := r.Uint64()
			running.Go(func() {
				defer f.release(lock)
				f.inject(ctx, flt, rand.New(rand.NewPCG(seed, 0)), lock)
			})
			break
		}
	}
}

func (f *faulter) take(lock string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.held[lock] {
		return false
	}
	f.held[lock] = true
	return true
}

func (f *faulter) release(lock string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.held, lock)
}

// inject runs one fault, telling the checker when it landed and when it
// was healed; a fault that could not be injected is counted apart.
func (f *faulter) inject(ctx context.Context, flt fault, r *rand.Rand, lock string) {
	f.mu.Lock()
	f.nextID++
	id := f.nextID
	f.mu.Unlock()
	landed := false
	err := flt.inject(ctx, f, r, lock, func(target string) {
		landed = true
		f.log("fault %d: %s: %s", id, flt.kind, target)
		f.sink <- invariant.FaultStarted{At: time.Now(), ID: id, Kind: flt.kind, Target: target}
	})
	if landed {
		f.sink <- invariant.FaultEnded{At: time.Now(), ID: id}
	}
	if err != nil {
		f.log("fault %d: %s: %v", id, flt.kind, err)
		if !landed {
			f.mu.Lock()
			f.failed[flt.kind]++
			f.mu.Unlock()
		}
	}
}

// hold waits d, or until ctx ends.
func hold(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// between is a duration in [lo, hi).
func between(r *rand.Rand, lo, hi time.Duration) time.Duration {
	return lo + time.Duration(r.Int64N(int64(hi-lo)))
}

// killManager sends SIGKILL to the manager's container in the leader's
// replica (leader) or in another, and waits until that replica is Ready
// again.
func killManager(leader bool) func(context.Context, *faulter, *rand.Rand, string, func(string)) error {
	return func(ctx context.Context, f *faulter, _ *rand.Rand, _ string, landed func(string)) error {
		lead, err := f.stack.Leader(ctx)
		if err != nil {
			return err
		}
		target := lead
		if !leader {
			replicas, err := f.stack.Pods(ctx, deploy.HealerSelector)
			if err != nil {
				return err
			}
			target = nil
			for i := range replicas {
				if replicas[i].Name != lead.Name && replicas[i].DeletionTimestamp == nil {
					target = &replicas[i]
				}
			}
			if target == nil {
				return errors.New("no standby replica")
			}
		}
		return f.killContainer(ctx, target, landed)
	}
}

// killDaemon sends SIGKILL to the daemon on node and waits until it is
// Ready again.
func killDaemon(ctx context.Context, f *faulter, _ *rand.Rand, node string, landed func(string)) error {
	pod, err := f.stack.DaemonPod(ctx, node)
	if err != nil {
		return err
	}
	return f.killContainer(ctx, pod, landed)
}

// killContainer sends SIGKILL to every process of the pod's first
// container (harness.KillContainer) and waits until it is Ready again.
func (f *faulter) killContainer(ctx context.Context, pod *corev1.Pod, landed func(string)) error {
	if err := harness.KillContainer(pod); err != nil {
		return err
	}
	landed(pod.Name)
	return harness.WaitRestarted(ctx, f.stack.Kube, pod, 3*time.Minute)
}

// restartOnNode stops a node's component and starts it again 1 to 5
// seconds later.
func restartOnNode(component string) func(context.Context, *faulter, *rand.Rand, string, func(string)) error {
	return func(ctx context.Context, f *faulter, r *rand.Rand, node string, landed func(string)) error {
		n, err := f.cluster.Node(node)
		if err != nil {
			return err
		}
		name := n.Component(component)
		if err := f.cluster.Stop(name); err != nil {
			return err
		}
		landed(node)
		hold(ctx, between(r, time.Second, 5*time.Second))
		return f.cluster.Start(context.WithoutCancel(ctx), name)
	}
}

// restartAPIServer stops kube-apiserver and starts it again up to 3 s
// later. The fault lands when the stop is asked for: kube-apiserver
// shuts down from its SIGTERM on, and the harness's stop returns only
// once it has exited, up to 10 s later.
func restartAPIServer(ctx context.Context, f *faulter, r *rand.Rand, _ string, landed func(string)) error {
	landed(harness.ComponentAPIServer)
	if err := f.cluster.Stop(harness.ComponentAPIServer); err != nil {
		return err
	}
	hold(ctx, between(r, 0, 3*time.Second))
	return f.cluster.Start(context.WithoutCancel(ctx), harness.ComponentAPIServer)
}

// nodeGrace is the harness's node-monitor-grace-period: a kubelet silent
// longer than this has its node marked NotReady.
const nodeGrace = 50 * time.Second

// pauseKubelet stops a node's kubelet with SIGSTOP for 5 to 20 seconds
// past the node grace, then continues it.
func pauseKubelet(ctx context.Context, f *faulter, r *rand.Rand, node string, landed func(string)) error {
	n, err := f.cluster.Node(node)
	if err != nil {
		return err
	}
	name := n.Component(harness.ComponentKubelet)
	if err := f.cluster.Pause(name); err != nil {
		return err
	}
	defer func() { _ = f.cluster.Resume(name) }()
	landed(node)
	hold(ctx, nodeGrace+between(r, 5*time.Second, 20*time.Second))
	return f.cluster.Resume(name)
}

// slowAPI pauses etcd for 1 to 4 seconds: every request the API server
// cannot answer from its watch cache waits.
func slowAPI(ctx context.Context, f *faulter, r *rand.Rand, _ string, landed func(string)) error {
	if err := f.cluster.Pause(harness.ComponentEtcd); err != nil {
		return err
	}
	defer func() { _ = f.cluster.Resume(harness.ComponentEtcd) }()
	landed(harness.ComponentEtcd + " paused")
	hold(ctx, between(r, time.Second, 4*time.Second))
	return f.cluster.Resume(harness.ComponentEtcd)
}

// loseNode stops a node's kubelet and containerd for 10 to 30 seconds
// past the node grace, then starts them again.
func loseNode(ctx context.Context, f *faulter, r *rand.Rand, node string, landed func(string)) error {
	n, err := f.cluster.Node(node)
	if err != nil {
		return err
	}
	components := []string{n.Component(harness.ComponentKubelet), n.Component(harness.ComponentContainerd)}
	for _, c := range components {
		if err := f.cluster.Stop(c); err != nil {
			return err
		}
	}
	landed(node)
	hold(ctx, nodeGrace+between(r, 10*time.Second, 30*time.Second))
	for _, c := range slices.Backward(components) {
		if err := f.cluster.Start(context.WithoutCancel(ctx), c); err != nil {
			return err
		}
	}
	return nil
}

// webhookRule refuses the API server's connections to the webhooks'
// port on the pod network for a while: nothing else of the machine's
// traffic is touched.
func webhookRule(f *faulter, op string) []string {
	return []string{"-w", "5", op, "OUTPUT", "-p", "tcp", "-d", f.cluster.PodNetwork().String(), "--dport", "9443",
		"-m", "comment", "--comment", "rejuv-soak", "-j", "REJECT", "--reject-with", "tcp-reset"}
}

// webhookUnreachable makes the webhooks unreachable for 5 to 30 seconds.
func webhookUnreachable(ctx context.Context, f *faulter, r *rand.Rand, _ string, landed func(string)) error {
	if out, err := exec.CommandContext(ctx, "iptables", webhookRule(f, "-I")...).CombinedOutput(); err != nil {
		return fmt.Errorf("iptables: %w: %s", err, out)
	}
	defer removeWebhookRules(f)
	landed("port 9443 of " + f.cluster.PodNetwork().String())
	hold(ctx, between(r, 5*time.Second, 30*time.Second))
	return nil
}

// removeWebhookRules removes every rule webhookUnreachable inserted.
func removeWebhookRules(f *faulter) {
	for exec.Command("iptables", webhookRule(f, "-D")...).Run() == nil {
	}
}

// rollout restarts the manager's Deployment (manager) or the daemon's
// DaemonSet as kubectl rollout restart does, and waits up to five minutes
// for it to finish.
func rollout(manager bool) func(context.Context, *faulter, *rand.Rand, string, func(string)) error {
	return func(ctx context.Context, f *faulter, _ *rand.Rand, _ string, landed func(string)) error {
		patch := fmt.Appendf(nil, `{"spec":{"template":{"metadata":{"annotations":{"rejuv.dev/soak-restarted-at":%q}}}}}`, time.Now().Format(time.RFC3339Nano))
		apps := f.stack.Kube.AppsV1()
		var name string
		if manager {
			name = "deployment/" + deploy.HealerDeployment
			if _, err := apps.Deployments(deploy.Namespace).Patch(ctx, deploy.HealerDeployment, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
		} else {
			name = "daemonset/" + deploy.DaemonSet
			if _, err := apps.DaemonSets(deploy.Namespace).Patch(ctx, deploy.DaemonSet, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
				return err
			}
		}
		landed(name)
		return wait.PollUntilContextTimeout(context.WithoutCancel(ctx), 2*time.Second, 5*time.Minute, false, func(ctx context.Context) (bool, error) {
			if manager {
				d, err := apps.Deployments(deploy.Namespace).Get(ctx, deploy.HealerDeployment, metav1.GetOptions{})
				return err == nil && rolledOut(d), nil
			}
			ds, err := apps.DaemonSets(deploy.Namespace).Get(ctx, deploy.DaemonSet, metav1.GetOptions{})
			return err == nil && ds.Status.ObservedGeneration == ds.Generation && ds.Status.UpdatedNumberScheduled == ds.Status.DesiredNumberScheduled &&
				ds.Status.NumberReady == ds.Status.DesiredNumberScheduled, nil
		})
	}
}

func rolledOut(d *appsv1.Deployment) bool {
	return d.Status.ObservedGeneration == d.Generation && d.Status.UpdatedReplicas == *d.Spec.Replicas &&
		d.Status.Replicas == *d.Spec.Replicas && d.Status.ReadyReplicas == *d.Spec.Replicas
}
