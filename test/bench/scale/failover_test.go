package scale

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// passesMetric counts a policy's passes that evaluated its rules, once
// each pass has finished: the standby, which runs no controller, has none.
const passesMetric = "rejuv_policy_evaluation_duration_seconds_count"

// failover is the leader's loss at one size: the time from its manager
// container's SIGKILL (a crash, an OOM kill) to the end of the first policy
// pass of the replica that took over: what a decision waits for when the
// leader is lost. The lease lapses first (controller-runtime's 15 s, the
// killed leader does not release it), then whoever asks first takes it:
// the standby, which caches every pod already, or the killed replica's
// restarted process (a new identity), which must fill its caches first.
type failover struct {
	took time.Duration
	// leaseTaken is the time from the SIGKILL until the lease first read
	// as held by another identity (read every 100 ms): what is left of
	// took is that replica starting its controllers and its first pass.
	leaseTaken time.Duration
	// killed and tookOver name the two replicas; restarted is true when
	// the killed replica's restarted process took the lease.
	killed, tookOver string
	restarted        bool
}

// measureFailover kills the leader and times until the first pass of the
// replica that took the lease, then waits until the killed replica is
// Ready again; the restart it caused is counted in deliberateRestarts.
func measureFailover(ctx context.Context) (failover, error) {
	var f failover
	leader, err := stack.Leader(ctx)
	if err != nil {
		return f, err
	}
	killedHolder, err := leaseHolder(ctx)
	if err != nil {
		return f, err
	}
	replicas, err := stack.Pods(ctx, deploy.HealerSelector)
	if err != nil {
		return f, err
	}
	standby := -1
	for i := range replicas {
		if replicas[i].Name != leader.Name && pods.Ready(&replicas[i]) {
			standby = i
		}
	}
	if standby < 0 {
		return f, errors.New("failover: no Ready standby replica")
	}
	other := &replicas[standby]
	text, err := stack.Metrics(ctx, other)
	if err != nil {
		return f, fmt.Errorf("failover: scrape the standby %s: %w", other.Name, err)
	}
	standbyPasses := metricSum(text, passesMetric)
	f.killed = leader.Name
	start := time.Now()
	if err := harness.KillContainer(leader); err != nil {
		return f, fmt.Errorf("failover: %w", err)
	}
	deliberateRestarts++
	var next *corev1.Pod
	passesBefore := 0.0
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if next == nil {
			holder, err := leaseHolder(ctx)
			if err != nil || holder == killedHolder {
				return false, nil
			}
			f.leaseTaken = time.Since(start)
			switch name, _, _ := strings.Cut(holder, "_"); name {
			case other.Name:
				next, passesBefore = other, standbyPasses
			case leader.Name:
				// A new process: its counters start at zero.
				next, f.restarted = leader, true
			default:
				return false, fmt.Errorf("failover: the lease is held by %s, neither replica", holder)
			}
			f.tookOver = next.Name
		}
		text, err := stack.Metrics(ctx, next)
		if err != nil {
			return false, nil
		}
		return metricSum(text, passesMetric) > passesBefore, nil
	})
	f.took = time.Since(start)
	if err != nil {
		return f, fmt.Errorf("failover: no replica made a policy pass within %s of the leader %s's kill (lease taken by %q): %w", f.took.Round(time.Second), leader.Name, f.tookOver, err)
	}
	if err := harness.WaitRestarted(ctx, stack.Kube, leader, 3*time.Minute); err != nil {
		return f, fmt.Errorf("failover: the killed replica %s was not Ready again: %w", leader.Name, err)
	}
	return f, nil
}

// leaseHolder is the identity holding the manager's leader lease
// (controller-runtime's POD_UUID, a new one for each process).
func leaseHolder(ctx context.Context) (string, error) {
	lease, err := stack.Kube.CoordinationV1().Leases(deploy.Namespace).Get(ctx, deploy.LeaseName, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("read the leader lease: %w", err)
	}
	if lease.Spec.HolderIdentity == nil {
		return "", nil
	}
	return *lease.Spec.HolderIdentity, nil
}

// deliberateRestarts counts the manager restarts the benchmark caused
// itself (measureFailover), which are not the manager's failures.
var deliberateRestarts int32
