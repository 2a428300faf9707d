package bench

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
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
	idle := settle(b)

	b.ResetTimer()
	for range b.N {
		var total, beforeStop, afterRunning, kubelet []time.Duration
		for i, t := range rejuvTargets {
			randomGap()
			tot, pre, post := recreateOnce(b, rt, t, fmt.Sprintf("s-%02d", i))
			total, beforeStop, afterRunning = append(total, tot), append(beforeStop, pre), append(afterRunning, post)
		}
		for _, t := range kubeletTargets {
			randomGap()
			kubelet = append(kubelet, kubeletRestart(b, rt, t))
		}
		burst, peak := burstOf(b, burstTargets)

		ratio := float64(percentile(total, 50)) / float64(percentile(kubelet, 50))
		fmt.Printf(`
Recreation latency on the local cluster (%d samples each, random gaps)
                                          p50        p95
  Rejuv: request created -> Completed   %9s  %9s
  kubelet: CRI stop -> new running      %9s  %9s
  ratio (p50)                           %9.3f
  Rejuv share: created -> stop issued   %9s  %9s
  Rejuv share: new running -> Completed %9s  %9s
  20 pods, one request each at once     %9s (all Completed)
  daemon RSS idle / peak under load     %9s  %9s
  daemon CPU idle / under load          %8.1f%% %8.1f%%
`, samples, ms(percentile(total, 50)), ms(percentile(total, 95)), ms(percentile(kubelet, 50)), ms(percentile(kubelet, 95)),
			ratio, ms(percentile(beforeStop, 50)), ms(percentile(beforeStop, 95)), ms(percentile(afterRunning, 50)), ms(percentile(afterRunning, 95)),
			burst.Round(time.Millisecond), mib(idle.rss), mib(peak.rss), idle.cpuPercent, peak.cpuPercent)
		b.ReportMetric(float64(percentile(total, 50).Milliseconds()), "rejuv-p50-ms")
		b.ReportMetric(float64(percentile(kubelet, 50).Milliseconds()), "kubelet-p50-ms")
		b.ReportMetric(ratio, "ratio-p50")
	}
}

// recreateOnce creates a request for one container and follows it: the
// total latency, the time from creation to the old container's exit (the
// stop issued, plus the few ms a SIGTERM-respecting process takes), and from
// the new container running in the pod's status to Completed.
func recreateOnce(b *testing.B, rt runtimeapi.RuntimeServiceClient, t target, name string) (total, beforeStop, afterRunning time.Duration) {
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
	var runningSeen, completed time.Time
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
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
	return completed.Sub(start), criFinishedAt(b, rt, old.ContainerID).Sub(start), completed.Sub(runningSeen)
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

// settle measures the daemon idle over two seconds.
func settle(b *testing.B) usage {
	b.Helper()
	pid := stack.Daemon.PID()
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
// daemon's peak memory and its CPU share meanwhile.
func burstOf(b *testing.B, targets []target) (time.Duration, usage) {
	b.Helper()
	ctx := context.Background()
	pid := stack.Daemon.PID()
	before, err := sampleProc(pid)
	if err != nil {
		b.Fatal(err)
	}
	var peak int64
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
				if s, err := sampleProc(pid); err == nil && s.rssBytes > peak {
					peak = s.rssBytes
				}
			}
		}
	}()
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
	err = wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
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
	close(done)
	if err != nil {
		b.Fatalf("burst not completed: %v", err)
	}
	after, err := sampleProc(pid)
	if err != nil {
		b.Fatal(err)
	}
	return took, usage{rss: max(peak, after.rssBytes), cpuPercent: 100 * float64(after.cpu-before.cpu) / float64(took)}
}
