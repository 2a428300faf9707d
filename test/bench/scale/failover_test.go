package scale

import (
	"context"
	"errors"
	"fmt"
	"time"

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
// pass of the standby that took over: what a decision waits for when the
// leader is lost. The lease lapses first (controller-runtime's 15 s, the
// killed leader does not release it), then the standby, which caches
// every pod already, starts the controllers.
type failover struct {
	took time.Duration
	// leaseTaken is the time from the SIGKILL until the lease first read
	// as held by the other replica (read every 100 ms): what is left of
	// took is that replica starting its controllers and its first pass.
	leaseTaken time.Duration
	// killed and took over name the two replicas.
	killed, tookOver string
}

// measureFailover kills the leader and times until the other replica's
// first pass, then waits until the killed replica is Ready again; the
// restart it caused is counted in deliberateRestarts.
func measureFailover(ctx context.Context) (failover, error) {
	var f failover
	leader, err := stack.Leader(ctx)
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
	before := metricSum(text, passesMetric)
	f.killed, f.tookOver = leader.Name, other.Name
	start := time.Now()
	if err := harness.KillContainer(leader); err != nil {
		return f, fmt.Errorf("failover: %w", err)
	}
	deliberateRestarts++
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if f.leaseTaken == 0 {
			if holder, err := stack.Leader(ctx); err == nil && holder.Name == other.Name {
				f.leaseTaken = time.Since(start)
			}
		}
		text, err := stack.Metrics(ctx, other)
		if err != nil {
			return false, nil
		}
		return metricSum(text, passesMetric) > before, nil
	})
	f.took = time.Since(start)
	if f.leaseTaken == 0 {
		// Taken between the last read of the lease and the pass.
		f.leaseTaken = f.took
	}
	if err != nil {
		return f, fmt.Errorf("failover: %s made no policy pass within %s of the leader %s's kill: %w", other.Name, f.took.Round(time.Second), leader.Name, err)
	}
	if err := harness.WaitRestarted(ctx, stack.Kube, leader, 3*time.Minute); err != nil {
		return f, fmt.Errorf("failover: the killed replica %s was not Ready again: %w", leader.Name, err)
	}
	return f, nil
}

// deliberateRestarts counts the manager restarts the benchmark caused
// itself (measureFailover), which are not the manager's failures.
var deliberateRestarts int32
