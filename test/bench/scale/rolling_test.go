package scale

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// The rolling measurement: in its own namespace, rollingPods pods of
// deploymentsPerNamespace Deployments and a policy with a nightly
// schedule, maxUnavailable rollingMaxUnavailable. The benchmark requests
// a restart now (spec.restartAt, which starts the same run the schedule
// would, as kubectl rejuv restart does) and times it until the policy
// reports the run Completed. Meanwhile it keeps the most requests the
// stand-in had in progress at once (the pods the run made unavailable,
// which maxUnavailable bounds) and the most pods of the namespace not
// Ready at once, counted at every change of one: that count also has the
// pods of simulated nodes the node controller marked not ready when kwok
// renewed their leases late, on a machine as busy as this one.
const (
	rollingNamespace      = "scale-rolling"
	rollingPods           = 1000
	rollingMaxUnavailable = "10%"
	rollingTimeout        = 15 * time.Minute
)

func rollingPolicy() *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: rollingNamespace, Name: "nightly"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{fleetLabel: fleetValue}},
			Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"},
			Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString(rollingMaxUnavailable))},
		},
	}
}

// rolling is what the measurement found.
type rolling struct {
	pods, limit int
	took        time.Duration
	// mostRecreating is the most requests in progress at once at the
	// stand-in; mostNotReady the most pods not Ready at once.
	mostRecreating, mostNotReady int
	// leaders are the manager's leaders before and after the run;
	// leaderCores the CPU the leader used meanwhile, in cores.
	leaders     [2]string
	leaderCores float64
	// profile is the leader's CPU profile during the run.
	profile   string
	recreated int32
	requests  requestRate
}

// measureRolling runs one rolling restart of rollingPods pods.
func measureRolling(ctx context.Context, s *standIn, pods int) (rolling, error) {
	r := rolling{pods: rollingPods}
	counts := make([]int32, deploymentsPerNamespace)
	for i := range counts {
		counts[i] = int32(rollingPods / deploymentsPerNamespace)
	}
	p := rollingPolicy()
	if err := workload(ctx, rollingNamespace, p, counts); err != nil {
		return r, err
	}
	limit, err := intstr.GetScaledValueFromIntOrPercent(p.Spec.Rollout.MaxUnavailable, rollingPods, false)
	if err != nil {
		return r, err
	}
	r.limit = max(limit, 1)
	unready, err := watchUnready(ctx, rollingNamespace)
	if err != nil {
		return r, err
	}
	defer unready.stop()
	before, err := readRequests(ctx)
	if err != nil {
		return r, err
	}
	s.resetMost(rollingNamespace)
	leader, err := stack.Leader(ctx)
	if err != nil {
		return r, err
	}
	r.leaders[0] = leader.Name
	cpuBefore, err := cpuSeconds(ctx, leader)
	if err != nil {
		return r, err
	}
	at := metav1.Now()
	start := time.Now()
	patch := fmt.Sprintf(`{"spec":{"restartAt":%q}}`, at.UTC().Format(time.RFC3339))
	if err := stack.Client.Patch(ctx, p, client.RawPatch(types.MergePatchType, []byte(patch))); err != nil {
		return r, fmt.Errorf("request a restart of policy %s/%s: %w", p.Namespace, p.Name, err)
	}
	// The leader's CPU profile from 3 s into the run, for where its time
	// goes (the run lasts longer than that at every size).
	var profiled sync.WaitGroup
	profiled.Go(func() {
		time.Sleep(3 * time.Second)
		if path, err := saveCPUProfile(ctx, leader, fmt.Sprintf("cpu-leader-rolling-%d.pb.gz", pods)); err == nil {
			r.profile = path
		}
	})
	var run *v1alpha1.Run
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, rollingTimeout, true, func(ctx context.Context) (bool, error) {
		if err := stack.Client.Get(ctx, client.ObjectKeyFromObject(p), p); err != nil {
			return false, nil
		}
		run = p.Status.Run
		return run != nil && run.Requested && run.ScheduledTime.Equal(&metav1.Time{Time: at.Truncate(time.Second)}) && run.State != v1alpha1.RunRunning, nil
	})
	r.took = time.Since(start)
	profiled.Wait()
	after, rerr := readRequests(ctx)
	if rerr != nil {
		return r, rerr
	}
	r.requests = rateBetween(before, after)
	r.mostNotReady, r.mostRecreating = unready.max(), s.mostActive(rollingNamespace)
	if l, err := stack.Leader(ctx); err == nil {
		r.leaders[1] = l.Name
	}
	if cpuAfter, err := cpuSeconds(ctx, leader); err == nil {
		r.leaderCores = (cpuAfter - cpuBefore) / r.took.Seconds()
	}
	if err != nil {
		return r, fmt.Errorf("the restart of %d pods requested for %s did not end within %s (run %+v)", rollingPods, at.UTC().Format(time.RFC3339), rollingTimeout, run)
	}
	r.recreated = run.Recreated
	if run.State != v1alpha1.RunCompleted || run.Recreated != rollingPods {
		return r, fmt.Errorf("the restart of %d pods ended %s with %d recreated: %s", rollingPods, run.State, run.Recreated, run.Message)
	}
	return r, nil
}

// cpuSeconds is the CPU a component has used, from its metrics endpoint.
func cpuSeconds(ctx context.Context, pod *corev1.Pod) (float64, error) {
	text, err := stack.Metrics(ctx, pod)
	if err != nil {
		return 0, err
	}
	return metricSum(text, "process_cpu_seconds_total"), nil
}

// unreadyCount counts, at every change of a pod of a namespace, its pods
// that are not Ready, and keeps the largest count.
type unreadyCount struct {
	w       watch.Interface
	done    chan struct{}
	mu      sync.Mutex
	unready map[types.UID]bool
	most    int
}

func watchUnready(ctx context.Context, ns string) (*unreadyCount, error) {
	list, err := fleet.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the pods of %s: %w", ns, err)
	}
	w, err := fleet.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		return nil, fmt.Errorf("watch the pods of %s: %w", ns, err)
	}
	u := &unreadyCount{w: w, done: make(chan struct{}), unready: map[types.UID]bool{}}
	for i := range list.Items {
		u.see(&list.Items[i], false)
	}
	go func() {
		defer close(u.done)
		for ev := range w.ResultChan() {
			if p, ok := ev.Object.(*corev1.Pod); ok {
				u.see(p, ev.Type == watch.Deleted)
			}
		}
	}()
	return u, nil
}

func (u *unreadyCount) see(p *corev1.Pod, deleted bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	c := pods.Condition(p, corev1.PodReady)
	u.unready[p.UID] = !deleted && (c == nil || c.Status != corev1.ConditionTrue)
	n := 0
	for _, v := range u.unready {
		if v {
			n++
		}
	}
	u.most = max(u.most, n)
}

func (u *unreadyCount) max() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.most
}

func (u *unreadyCount) stop() {
	u.w.Stop()
	<-u.done
}
