package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// samples per measurement; every sample recreates a container of its own.
const samples = 20

// BenchmarkRecreate prints, from one run on the real cluster: Rejuv's
// latency from a request's creation to Completed (minStartedSeconds 0),
// the kubelet's own restart latency (CRI stop to the new container running
// in the pod's status) for as many containers, their ratio, Rejuv's two
// shares, the time for 20 pods with one request each created at once, and
// the daemon's memory and CPU idle and under that load.
//
//	go test -run '^$' -bench BenchmarkRecreate -benchtime 1x -timeout 30m ./test/bench
func BenchmarkRecreate(b *testing.B) {
	ns := newNamespace(b)
	// Five containers a pod keeps the number of sandboxes low for the
	// sequential samples; the burst is 20 pods with one request each.
	rejuvTargets := createPods(b, ns, "rejuv", samples, 5)
	kubeletTargets := createPods(b, ns, "kubelet", samples, 5)
	burstTargets := createPods(b, ns, "burst", samples, 1)
	rt, closeCRI := dialCRI(b)
	defer closeCRI()
	daemonPID, managerPID := pids(b)
	idle, managerIdle := settle(b, daemonPID), settle(b, managerPID)

	b.ResetTimer()
	for range b.N {
		var total, admitted, toStop, toExit, afterRunning, kubelet, plain []time.Duration
		for i, t := range rejuvTargets {
			randomGap()
			plain = append(plain, plainCreate(b, t.ns, fmt.Sprintf("plain-%02d", i)))
			r := recreateOnce(b, rt, t, fmt.Sprintf("s-%02d", i))
			total, admitted, toStop = append(total, r.total), append(admitted, r.admitted), append(toStop, r.toStop)
			toExit, afterRunning = append(toExit, r.toExit), append(afterRunning, r.afterRunning)
		}
		for _, t := range kubeletTargets {
			randomGap()
			kubelet = append(kubelet, kubeletRestart(b, rt, t))
		}
		burst, peak, managerPeak := burstOf(b, burstTargets, daemonPID, managerPID)

		ratio := float64(percentile(total, 50)) / float64(percentile(kubelet, 50))
		// The measured ratio swings with the kubelet's one-second relist;
		// what Rejuv adds, its two shares, over the kubelet's restart is
		// its expected value.
		expected := 1 + float64(percentile(toStop, 50)+percentile(afterRunning, 50))/float64(percentile(kubelet, 50))
		fmt.Printf(`
Recreation latency on the local cluster (%d samples each, random gaps)
                                          p50        p95
  Rejuv: request created -> Completed   %9s  %9s
  kubelet: CRI stop -> new running      %9s  %9s
  ratio (p50)                           %9.3f
  ratio expected from the shares        %9.3f
  Rejuv share: created -> stop issued   %9s  %9s
    of which the create call (webhooks) %9s  %9s
      (a ConfigMap's create, no webhook %9s  %9s)
    create call returned -> stop issued %9s  %9s
  runtime: stop issued -> old exited    %9s  %9s
  created -> old container exited       %9s  %9s
  Rejuv share: new running -> Completed %9s  %9s
  20 pods, one request each at once     %9s (all Completed)
  daemon RSS idle / peak under load     %9s  %9s
  daemon CPU idle / under load          %8.1f%% %8.1f%%
  manager (leader) RSS idle / peak      %9s  %9s
  manager (leader) CPU idle / under load%8.1f%% %8.1f%%
`, samples, ms(percentile(total, 50)), ms(percentile(total, 95)), ms(percentile(kubelet, 50)), ms(percentile(kubelet, 95)),
			ratio, expected, ms(percentile(toStop, 50)), ms(percentile(toStop, 95)), ms(percentile(admitted, 50)), ms(percentile(admitted, 95)),
			ms(percentile(plain, 50)), ms(percentile(plain, 95)),
			ms(percentile(between(admitted, toStop), 50)), ms(percentile(between(admitted, toStop), 95)),
			ms(percentile(between(toStop, toExit), 50)), ms(percentile(between(toStop, toExit), 95)),
			ms(percentile(toExit, 50)), ms(percentile(toExit, 95)), ms(percentile(afterRunning, 50)), ms(percentile(afterRunning, 95)),
			burst.Round(time.Millisecond), mib(idle.rss), mib(peak.rss), idle.cpuPercent, peak.cpuPercent,
			mib(managerIdle.rss), mib(managerPeak.rss), managerIdle.cpuPercent, managerPeak.cpuPercent)
		b.ReportMetric(float64(percentile(total, 50).Milliseconds()), "rejuv-p50-ms")
		b.ReportMetric(float64(percentile(kubelet, 50).Milliseconds()), "kubelet-p50-ms")
		b.ReportMetric(ratio, "ratio-p50")
	}
}

// sample is one request's timeline, each figure counted from just before
// the create call.
type sample struct {
	// total is until Completed is seen; admitted until the create call
	// returned (the API server and the webhooks).
	total, admitted time.Duration
	// toStop is until the daemon's StoppingContainer event, recorded with
	// microseconds just before it calls StopContainer; toExit until the
	// runtime's exit time of the old container.
	toStop, toExit time.Duration
	// afterRunning is from the new container running in the pod's status
	// to Completed.
	afterRunning time.Duration
}

// plainCreate times the create of a ConfigMap: what the API server and
// etcd take for a create without a webhook, next to a request's.
func plainCreate(b *testing.B, namespace, name string) time.Duration {
	b.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Data: map[string]string{"k": "v"}}
	start := time.Now()
	if err := stack.Client.Create(context.Background(), cm); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// recreateOnce creates a request for one container and follows it.
func recreateOnce(b *testing.B, rt runtimeapi.RuntimeServiceClient, t target, name string) sample {
	b.Helper()
	ctx := context.Background()
	old, _ := waitRunning(b, t, "")
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.ns, Name: name},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: t.pod, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: t.container}}},
	}
	start := time.Now()
	if err := stack.Client.Create(ctx, crr); err != nil {
		b.Fatal(err)
	}
	admitted := time.Since(start)
	var runningSeen, completed, exited time.Time
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		// Read the old container's exit while it is there: the kubelet
		// may remove it soon after.
		if exited.IsZero() {
			exited = criFinishedAt(ctx, rt, old.ContainerID)
		}
		if runningSeen.IsZero() {
			if st, seen := peekRunning(ctx, t, old.ContainerID); st {
				runningSeen = seen
			}
		}
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := stack.Client.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			return false, nil
		}
		if cur.Status.Phase == v1beta1.PhaseCompleted {
			completed = time.Now()
			if cur.Status.Result != v1beta1.ResultSucceeded {
				return false, fmt.Errorf("request %s: %s %+v", name, cur.Status.Result, cur.Status.ContainerRecreateStates)
			}
			return true, nil
		}
		return false, nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if runningSeen.IsZero() || runningSeen.After(completed) {
		runningSeen = completed
	}
	if exited.IsZero() {
		b.Fatalf("request %s: the old container's exit was never seen in the runtime", name)
	}
	return sample{total: completed.Sub(start), admitted: admitted, toStop: stoppingEventAt(b, crr).Sub(start),
		toExit: exited.Sub(start), afterRunning: completed.Sub(runningSeen)}
}

// stoppingEventAt returns the eventTime of the daemon's StoppingContainer
// event on the request; events are sent asynchronously, so it may take a
// moment to appear.
func stoppingEventAt(b *testing.B, crr *v1beta1.ContainerRecreateRequest) time.Time {
	b.Helper()
	var at time.Time
	err := wait.PollUntilContextTimeout(context.Background(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		list := &eventsv1.EventList{}
		if err := stack.Client.List(ctx, list, client.InNamespace(crr.Namespace)); err != nil {
			return false, nil
		}
		for _, e := range list.Items {
			if e.Reason == "StoppingContainer" && e.Regarding.Kind == "ContainerRecreateRequest" && e.Regarding.Name == crr.Name {
				at = e.EventTime.Time
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		b.Fatalf("no StoppingContainer event for request %s: %v", crr.Name, err)
	}
	return at
}

// between is, sample by sample, the time from one point of the timeline
// to a later one (negative when the later came first: the daemon can stop
// the container before the create call's answer reaches the client).
func between(from, to []time.Duration) []time.Duration {
	out := make([]time.Duration, len(from))
	for i := range from {
		out[i] = to[i] - from[i]
	}
	return out
}

// peekRunning says whether the container runs with a new ID now.
func peekRunning(ctx context.Context, t target, oldID string) (bool, time.Time) {
	pod := &corev1.Pod{}
	if err := stack.Client.Get(ctx, nsName(t.ns, t.pod), pod); err != nil {
		return false, time.Time{}
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name == t.container && cs.State.Running != nil && cs.ContainerID != oldID && cs.ContainerID != "" {
			return true, time.Now()
		}
	}
	return false, time.Time{}
}

// kubeletRestart stops a container through the CRI, as the daemon does,
// and waits for the kubelet's new container to run in the pod's status.
func kubeletRestart(b *testing.B, rt runtimeapi.RuntimeServiceClient, t target) time.Duration {
	b.Helper()
	old, _ := waitRunning(b, t, "")
	_, id, _ := strings.Cut(old.ContainerID, "://")
	start := time.Now()
	if _, err := rt.StopContainer(context.Background(), &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 2}); err != nil {
		b.Fatal(err)
	}
	_, seen := waitRunning(b, t, old.ContainerID)
	return seen.Sub(start)
}

// usage is a process's memory and CPU share over an interval.
type usage struct {
	rss        int64
	cpuPercent float64
}

// pids are the host PIDs of the first node's installed daemon and of the
// manager replica that leads (the one running the controllers).
func pids(b *testing.B) (daemon, manager int) {
	b.Helper()
	ctx := context.Background()
	daemon, err := stack.DaemonPID(ctx, cluster.NodeName())
	if err != nil {
		b.Fatal(err)
	}
	leader, err := stack.Leader(ctx)
	if err != nil {
		b.Fatal(err)
	}
	manager, err = deploy.ContainerPID(ctx, cluster, leader, "manager")
	if err != nil {
		b.Fatal(err)
	}
	return daemon, manager
}

// settle measures a process idle over two seconds.
func settle(b *testing.B, pid int) usage {
	b.Helper()
	before, err := sampleProc(pid)
	if err != nil {
		b.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	after, err := sampleProc(pid)
	if err != nil {
		b.Fatal(err)
	}
	return usage{rss: after.rssBytes, cpuPercent: 100 * float64(after.cpu-before.cpu) / float64(2*time.Second)}
}

// burstOf creates one request per target at once (the targets are in
// several pods) and returns the time until all completed, with the
// daemon's and the manager's peak memory and CPU share meanwhile.
func burstOf(b *testing.B, targets []target, daemonPID, managerPID int) (time.Duration, usage, usage) {
	b.Helper()
	ctx := context.Background()
	daemon, manager := watchProc(b, daemonPID), watchProc(b, managerPID)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(targets))
	for i, t := range targets {
		wg.Go(func() {
			crr := &v1beta1.ContainerRecreateRequest{
				ObjectMeta: metav1.ObjectMeta{Namespace: t.ns, Name: fmt.Sprintf("burst-%02d", i)},
				Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: t.pod, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: t.container}}},
			}
			errs <- stack.Client.Create(ctx, crr)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &v1beta1.ContainerRecreateRequestList{}
		if err := stack.Client.List(ctx, list, client.InNamespace(targets[0].ns)); err != nil {
			return false, nil
		}
		n := 0
		for _, r := range list.Items {
			if strings.HasPrefix(r.Name, "burst-") && r.Status.Phase == v1beta1.PhaseCompleted {
				n++
			}
		}
		return n == len(targets), nil
	})
	took := time.Since(start)
	if err != nil {
		b.Fatalf("burst not completed: %v", err)
	}
	return took, daemon.stop(b, took), manager.stop(b, took)
}

// procWatch samples a process's resident memory every 50 ms until stopped.
type procWatch struct {
	pid    int
	before procSample
	peak   atomic.Int64
	done   chan struct{}
}

func watchProc(b *testing.B, pid int) *procWatch {
	b.Helper()
	before, err := sampleProc(pid)
	if err != nil {
		b.Fatal(err)
	}
	w := &procWatch{pid: pid, before: before, done: make(chan struct{})}
	go func() {
		for {
			select {
			case <-w.done:
				return
			case <-time.After(50 * time.Millisecond):
				if s, err := sampleProc(pid); err == nil && s.rssBytes > w.peak.Load() {
					w.peak.Store(s.rssBytes)
				}
			}
		}
	}()
	return w
}

// stop ends the sampling and returns the peak memory and the CPU share
// over took.
func (w *procWatch) stop(b *testing.B, took time.Duration) usage {
	b.Helper()
	close(w.done)
	after, err := sampleProc(w.pid)
	if err != nil {
		b.Fatal(err)
	}
	return usage{rss: max(w.peak.Load(), after.rssBytes), cpuPercent: 100 * float64(after.cpu-w.before.cpu) / float64(took)}
}
