package scale

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rejuv-dev/rejuv/test/deploy"
)

// reactionParts is where the managers' time went while the reaction was
// measured, from their own metrics: the mean of every policy's wait in
// the work queue and of every pass (the fleet's, which the churn keeps
// busy, as well as the reaction's), read from the leader, and the mean
// admission of a request, read from both replicas (the Service sends a
// request to either). A reaction is at least a wait, a pass and an
// admission.
type reactionParts struct {
	queued, passes, admissions, evaluations, creates, queuedByServer int
	wait, pass, admission, evaluation, create, serverWait            time.Duration
}

func (p reactionParts) String() string {
	return fmt.Sprintf("a policy waited %s in the work queue (mean of %d), a pass took %s (mean of %d), the reaction policy's rules over its pods %s (mean of %d), an admission of a request %s (mean of %d)",
		p.wait.Round(time.Millisecond), p.queued, p.pass.Round(time.Millisecond), p.passes,
		p.evaluation.Round(100*time.Microsecond), p.evaluations,
		p.admission.Round(100*time.Microsecond), p.admissions) +
		fmt.Sprintf("; the API server: a request's create took %s (mean of %d), a request of priority level workload-low (the manager's) waited %s for a seat (mean of %d)",
			p.create.Round(time.Millisecond), p.creates, p.serverWait.Round(time.Millisecond), p.queuedByServer)
}

// managerTimes is a reading of the sums and counts reactionParts is the
// difference of.
type managerTimes struct {
	waitSum, waitCount, passSum, passCount, admissionSum, admissionCount, evaluationSum, evaluationCount float64
	createSum, createCount, serverWaitSum, serverWaitCount                                               float64
}

// readManagerTimes scrapes both replicas and the API server.
func readManagerTimes(ctx context.Context) (managerTimes, error) {
	var t managerTimes
	raw, err := fleet.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return t, fmt.Errorf("read the API server's metrics: %w", err)
	}
	server := string(raw)
	create := []string{`verb="POST"`, `resource="containerrecreaterequests"`}
	t.createSum = metricWith(server, "apiserver_request_duration_seconds_sum", create...)
	t.createCount = metricWith(server, "apiserver_request_duration_seconds_count", create...)
	seat := []string{`priority_level="workload-low"`, `execute="true"`}
	t.serverWaitSum = metricWith(server, "apiserver_flowcontrol_request_wait_duration_seconds_sum", seat...)
	t.serverWaitCount = metricWith(server, "apiserver_flowcontrol_request_wait_duration_seconds_count", seat...)
	leader, err := stack.Leader(ctx)
	if err != nil {
		return t, err
	}
	managers, err := stack.Pods(ctx, deploy.HealerSelector)
	if err != nil {
		return t, err
	}
	for i := range managers {
		p := &managers[i]
		text, err := stack.Metrics(ctx, p)
		if err != nil {
			return t, fmt.Errorf("read the metrics of manager %s: %w", p.Name, err)
		}
		admission := `webhook="/mutate-apps-kruise-io-v1beta1-containerrecreaterequest"`
		t.admissionSum += metricWith(text, "controller_runtime_webhook_latency_seconds_sum", admission)
		t.admissionCount += metricWith(text, "controller_runtime_webhook_latency_seconds_count", admission)
		if p.Name != leader.Name {
			continue
		}
		queue := `name="recreatepolicy"`
		t.waitSum = metricWith(text, "workqueue_queue_duration_seconds_sum", queue)
		t.waitCount = metricWith(text, "workqueue_queue_duration_seconds_count", queue)
		controller := `controller="recreatepolicy"`
		t.passSum = metricWith(text, "controller_runtime_reconcile_time_seconds_sum", controller)
		t.passCount = metricWith(text, "controller_runtime_reconcile_time_seconds_count", controller)
		react := `namespace="` + reactNamespace + `"`
		t.evaluationSum = metricWith(text, "rejuv_policy_evaluation_duration_seconds_sum", react)
		t.evaluationCount = metricWith(text, "rejuv_policy_evaluation_duration_seconds_count", react)
	}
	return t, nil
}

// partsBetween is what happened between two readings of the same leader.
func partsBetween(a, b managerTimes) reactionParts {
	mean := func(sum, count float64) time.Duration {
		if count <= 0 {
			return 0
		}
		return time.Duration(sum / count * float64(time.Second))
	}
	return reactionParts{
		queued:         int(b.waitCount - a.waitCount),
		passes:         int(b.passCount - a.passCount),
		admissions:     int(b.admissionCount - a.admissionCount),
		evaluations:    int(b.evaluationCount - a.evaluationCount),
		wait:           mean(b.waitSum-a.waitSum, b.waitCount-a.waitCount),
		pass:           mean(b.passSum-a.passSum, b.passCount-a.passCount),
		admission:      mean(b.admissionSum-a.admissionSum, b.admissionCount-a.admissionCount),
		evaluation:     mean(b.evaluationSum-a.evaluationSum, b.evaluationCount-a.evaluationCount),
		creates:        int(b.createCount - a.createCount),
		create:         mean(b.createSum-a.createSum, b.createCount-a.createCount),
		queuedByServer: int(b.serverWaitCount - a.serverWaitCount),
		serverWait:     mean(b.serverWaitSum-a.serverWaitSum, b.serverWaitCount-a.serverWaitCount),
	}
}

// metricWith is the sum of a metric's samples whose labels contain every
// label given (name="value").
func metricWith(text, name string, labels ...string) float64 {
	sum := 0.0
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(line, name+"{")
		if !ok {
			continue
		}
		end := strings.LastIndex(rest, "}")
		if end < 0 || !containsAll(rest[:end], labels) {
			continue
		}
		fields := strings.Fields(rest[end+1:])
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// leaderPasses is how many policy passes the leader's process has run:
// after a failover, since it took over.
func leaderPasses(ctx context.Context) (int, error) {
	leader, err := stack.Leader(ctx)
	if err != nil {
		return 0, err
	}
	text, err := stack.Metrics(ctx, leader)
	if err != nil {
		return 0, fmt.Errorf("read the metrics of manager %s: %w", leader.Name, err)
	}
	return int(metricWith(text, "controller_runtime_reconcile_total", `controller="recreatepolicy"`)), nil
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
