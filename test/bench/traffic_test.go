package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/images"
	"github.com/rejuv-dev/rejuv/test/traffic"
)

// Each way restarts a Deployment of trafficReplicas testapp pods (1 s
// readiness probe, graceful shutdown on SIGTERM) behind a Service, while
// two clients send trafficRate requests a second each through the
// Service's cluster IP (kube-proxy), one over kept-alive connections, one
// opening a connection per request.
const (
	trafficReplicas = 4
	trafficRate     = 200
	trafficQuiet    = 10 * time.Second // before and after the restart
)

// way is one way of restarting every pod of the Deployment.
type way struct {
	name string
	// gated: the pods are created while a RecreatePolicy selects them,
	// so they get the readiness gate.
	gated bool
	// preStop gives the app container a preStop hook that sleeps 5 s, as
	// users of kubectl rollout restart add so that endpoints are updated
	// before the app stops.
	preStop bool
	// restart restarts the Deployment web in ns and returns once done.
	restart func(b *testing.B, ns string)
}

// BenchmarkRollingRestartTraffic prints, for each way of restarting every
// pod of a Deployment behind a Service, what the Service's clients saw:
// failed requests, latency before, during and after, how long the restart
// took and how many extra pods it needed; and how long new connections
// still reached a pod after it turned not ready (what the unready grace
// must cover).
//
//	go test -run '^$' -bench BenchmarkRollingRestartTraffic -benchtime 1x -timeout 30m ./test/bench
func BenchmarkRollingRestartTraffic(b *testing.B) {
	plugin := buildPlugin(b)
	ways := []way{
		{"kubectl rollout restart (new pods)", false, false, rolloutRestart},
		{"kubectl rollout restart, preStop sleep 5s", false, true, rolloutRestart},
		{"kubectl rejuv restart, pods without the gate", false, false, pluginRestart(plugin)},
		{"kubectl rejuv restart (default)", true, false, pluginRestart(plugin)},
		{"a policy's run (restartAt, default)", true, false, policyRun(nil)},
		{"a policy's run, unreadyGracePeriodSeconds 0", true, false, policyRun(new(int64(0)))},
	}
	b.ResetTimer()
	for range b.N {
		var rows []trafficRow
		for _, w := range ways {
			if only := os.Getenv("REJUV_TRAFFIC_WAYS"); only != "" && !strings.Contains(w.name, only) {
				continue
			}
			rows = append(rows, measureWay(b, w)...)
		}
		printTraffic(rows)
	}
}

// trafficRow is what one client saw during one way's restart.
type trafficRow struct {
	way, conns string
	report     *traffic.Report
	took       time.Duration
	extraPods  int
	// stillReached is, over the pods, the longest time from a pod being
	// seen not ready to the last new connection its old container
	// answered; none for ways that do not make pods not ready first.
	stillReached time.Duration
}

func measureWay(b *testing.B, w way) []trafficRow {
	b.Helper()
	ctx := context.Background()
	c := stack.Client
	ns := newNamespace(b)
	labels := map[string]string{"app": "web"}
	if w.gated {
		p := &v1alpha1.RecreatePolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
			Spec:       v1alpha1.RecreatePolicySpec{Selector: metav1.LabelSelector{MatchLabels: labels}, Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"}},
		}
		if err := c.Create(ctx, p); err != nil {
			b.Fatal(err)
		}
		poll(b, "the manager to see policy nightly", time.Minute, func() bool {
			got := &v1alpha1.RecreatePolicy{}
			return c.Get(ctx, nsName(ns, "nightly"), got) == nil && got.Status.ObservedGeneration == got.Generation
		})
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}
	if err := c.Create(ctx, svc); err != nil {
		b.Fatal(err)
	}
	url := "http://" + svc.Spec.ClusterIP + "/"
	names := createWebDeployment(b, ns, labels, w.preStop)
	for _, name := range names {
		pod := &corev1.Pod{}
		if err := c.Get(ctx, nsName(ns, name), pod); err != nil {
			b.Fatal(err)
		}
		if pods.HasReadinessGate(pod) != w.gated {
			b.Fatalf("%s: pod %s has the readiness gate: %t, want %t", w.name, name, pods.HasReadinessGate(pod), w.gated)
		}
	}
	var bodies []string
	for _, n := range names {
		bodies = append(bodies, "testapp "+n)
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := traffic.WaitAnswered(wctx, url, bodies); err != nil {
		b.Fatal(err)
	}

	streams := map[string]*traffic.Stream{}
	for conns, keepAlive := range map[string]bool{"kept alive": true, "one per request": false} {
		// Bounded: it stops by itself after five minutes' worth.
		s, err := traffic.Start(url, "before", traffic.Options{Rate: trafficRate, KeepAlive: keepAlive, Limit: trafficRate * 300})
		if err != nil {
			b.Fatal(err)
		}
		streams[conns] = s
	}
	time.Sleep(trafficQuiet)
	for _, s := range streams {
		s.Phase("during")
	}
	seen := watchReadiness(b, ns)
	start := time.Now()
	w.restart(b, ns)
	took := time.Since(start)
	for _, s := range streams {
		s.Phase("after")
	}
	time.Sleep(trafficQuiet)
	transitions, mostPods := seen.stop()
	var rows []trafficRow
	for _, conns := range []string{"kept alive", "one per request"} {
		r := streams[conns].Stop()
		row := trafficRow{way: w.name, conns: conns, report: r, took: took, extraPods: max(0, mostPods-trafficReplicas)}
		if conns == "one per request" && w.gated {
			row.stillReached = stillReached(r, transitions)
		}
		rows = append(rows, row)
	}
	return rows
}

// createWebDeployment creates Deployment web of testapp pods and returns
// their names once all are Ready.
func createWebDeployment(b *testing.B, ns string, labels map[string]string, preStop bool) []string {
	b.Helper()
	probe := &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1, FailureThreshold: 1,
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(trafficReplicas)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					TerminationGracePeriodSeconds: new(int64(5)),
					Containers: []corev1.Container{{
						Name: "app", Image: images.TestApp.Ref(),
						Ports: []corev1.ContainerPort{{ContainerPort: 8080}}, ReadinessProbe: probe,
					}},
				},
			},
		},
	}
	if preStop {
		d.Spec.Template.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}}
		d.Spec.Template.Spec.TerminationGracePeriodSeconds = new(int64(10))
	}
	if err := stack.Client.Create(context.Background(), d); err != nil {
		b.Fatal(err)
	}
	var names []string
	poll(b, "Deployment web's pods to be Ready", 2*time.Minute, func() bool {
		ready := readyPods(b, ns)
		names = ready
		return len(ready) == trafficReplicas
	})
	return names
}

// readyPods names the Ready pods of ns not being deleted.
func readyPods(b *testing.B, ns string) []string {
	list := &corev1.PodList{}
	if err := stack.Client.List(context.Background(), list, client.InNamespace(ns)); err != nil {
		b.Fatal(err)
	}
	var out []string
	for i := range list.Items {
		p := &list.Items[i]
		if c := pods.Condition(p, corev1.PodReady); p.DeletionTimestamp == nil && c != nil && c.Status == corev1.ConditionTrue {
			out = append(out, p.Name)
		}
	}
	return out
}

// readinessWatch records, as seen by this process, when each pod of a
// namespace turned not ready and ready again, and the most pods at once.
type readinessWatch struct {
	stopFn func()
	mu     sync.Mutex
	spans  map[string][]span
	most   int
}

// span is a pod's time out of service: from seen not ready to seen Ready
// again (zero while still not ready).
type span struct{ from, to time.Time }

func watchReadiness(b *testing.B, ns string) *readinessWatch {
	b.Helper()
	w := &readinessWatch{spans: map[string][]span{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			list := &corev1.PodList{}
			if stack.Client.List(ctx, list, client.InNamespace(ns)) != nil {
				return false, nil
			}
			now := time.Now()
			w.mu.Lock()
			defer w.mu.Unlock()
			w.most = max(w.most, len(list.Items))
			for i := range list.Items {
				p := &list.Items[i]
				c := pods.Condition(p, corev1.PodReady)
				ready := c != nil && c.Status == corev1.ConditionTrue && p.DeletionTimestamp == nil
				s := w.spans[p.Name]
				open := len(s) > 0 && s[len(s)-1].to.IsZero()
				switch {
				case !ready && !open:
					w.spans[p.Name] = append(s, span{from: now})
				case ready && open:
					s[len(s)-1].to = now
				}
			}
			return false, nil
		})
	}()
	w.stopFn = func() { cancel(); <-done }
	return w
}

func (w *readinessWatch) stop() (map[string][]span, int) {
	w.stopFn()
	return w.spans, w.most
}

// stillReached is the longest time, over the pods' spans out of service,
// from the span's start to the last request its old container answered:
// the end of the first run of answers, before a pause of a second or more
// (at the clients' rate each pod answers every few tens of milliseconds
// while in service; the new container answers again only once the pod is
// back in the endpoints). It is how long new connections still reached a
// pod seen not ready.
func stillReached(r *traffic.Report, spans map[string][]span) time.Duration {
	var longest time.Duration
	for pod, ss := range spans {
		var sent []time.Time
		for _, res := range r.Results {
			if res.Err == "" && res.Body == "testapp "+pod {
				sent = append(sent, res.Sent)
			}
		}
		slices.SortFunc(sent, time.Time.Compare)
		for _, s := range ss {
			last := s.from
			for _, t := range sent {
				if t.Before(s.from) {
					continue
				}
				if t.Sub(last) >= time.Second {
					break
				}
				last = t
			}
			longest = max(longest, last.Sub(s.from))
		}
	}
	return longest
}

// rolloutRestart is kubectl rollout restart: a new pod template, rolled
// out by the Deployment controller; done when every pod is new and Ready.
func rolloutRestart(b *testing.B, ns string) {
	b.Helper()
	ctx := context.Background()
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"kubectl.kubernetes.io/restartedAt":%q}}}}}`, time.Now().Format(time.RFC3339))
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	if err := stack.Client.Patch(ctx, d, client.RawPatch(types.StrategicMergePatchType, []byte(patch))); err != nil {
		b.Fatal(err)
	}
	poll(b, "the rollout to finish", 5*time.Minute, func() bool {
		if err := stack.Client.Get(ctx, nsName(ns, "web"), d); err != nil {
			return false
		}
		s := d.Status
		all := &corev1.PodList{}
		_ = stack.Client.List(ctx, all, client.InNamespace(ns))
		return s.ObservedGeneration >= d.Generation && s.UpdatedReplicas == trafficReplicas && s.ReadyReplicas == trafficReplicas &&
			s.Replicas == trafficReplicas && len(all.Items) == trafficReplicas
	})
}

// pluginRestart is kubectl rejuv restart deployment/web --wait.
func pluginRestart(plugin string) func(*testing.B, string) {
	return func(b *testing.B, ns string) {
		b.Helper()
		cmd := exec.Command(plugin, "--kubeconfig", cluster.Kubeconfig(), "--cache-dir", b.TempDir(), "-n", ns, "restart", "deployment/web", "--wait", "--timeout", "5m")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("kubectl rejuv restart deployment/web: %v\n%s", err, out)
		}
	}
}

// policyRun asks policy nightly for a run now (spec.restartAt), with
// grace as its requests' unready grace when set, and waits for the run.
func policyRun(grace *int64) func(*testing.B, string) {
	return func(b *testing.B, ns string) {
		b.Helper()
		ctx := context.Background()
		p := &v1alpha1.RecreatePolicy{}
		if err := stack.Client.Get(ctx, nsName(ns, "nightly"), p); err != nil {
			b.Fatal(err)
		}
		at := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
		p.Spec.RestartAt = &at
		if grace != nil {
			p.Spec.Recreate.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: grace}
		}
		if err := stack.Client.Update(ctx, p); err != nil {
			b.Fatal(err)
		}
		poll(b, "the policy's run to complete", 5*time.Minute, func() bool {
			if err := stack.Client.Get(ctx, nsName(ns, "nightly"), p); err != nil {
				return false
			}
			r := p.Status.Run
			return r != nil && r.Requested && r.ScheduledTime.Equal(&at) && r.State != v1alpha1.RunRunning
		})
		if p.Status.Run.State != v1alpha1.RunCompleted {
			b.Fatalf("the policy's run ended %s: %+v", p.Status.Run.State, p.Status.Run)
		}
	}
}

// buildPlugin builds kubectl-rejuv for the benchmark.
func buildPlugin(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "kubectl-rejuv")
	if out, err := exec.Command("go", "build", "-o", path, "../../cmd/kubectl-rejuv").CombinedOutput(); err != nil {
		b.Fatalf("go build kubectl-rejuv: %v\n%s", err, out)
	}
	return path
}

// poll calls cond every 200 ms until it holds, failing after limit.
func poll(b *testing.B, what string, limit time.Duration, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			b.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func printTraffic(rows []trafficRow) {
	fmt.Printf("\nRolling restart of a Deployment of %d pods behind a Service, %d requests/s per client (%s before and after)\n", trafficReplicas, trafficRate, trafficQuiet)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "way\tconnections\tfailed / sent\tp50 / p99 / max before\tduring\tafter\trestart took\textra pods\tnew connections after not ready\t")
	lat := func(p traffic.PhaseReport) string {
		return fmt.Sprintf("%s / %s / %s", ms(p.P50), ms(p.P99), ms(p.Max))
	}
	for _, r := range rows {
		sent, failed := r.report.Total()
		reached := "-"
		if r.stillReached > 0 {
			reached = ms(r.stillReached)
		}
		fmt.Fprintf(w, "%s\t%s\t%d / %d\t%s\t%s\t%s\t%s\t%d\t%s\t\n", r.way, r.conns, failed, sent,
			lat(r.report.Phase("before")), lat(r.report.Phase("during")), lat(r.report.Phase("after")),
			r.took.Round(100*time.Millisecond), r.extraPods, reached)
	}
	_ = w.Flush()
	for _, r := range rows {
		if f := r.report.Failures(); len(f) > 0 {
			fmt.Printf("  %s, %s: %s\n", r.way, r.conns, strings.Join(f, "; "))
		}
	}
}
