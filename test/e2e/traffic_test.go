package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/test/traffic"
)

// requestsPerStream is how many requests each client sends at least.
const requestsPerStream = 10_000

// TestRollingRestartThroughAServiceFailsNoRequest: two clients send 200
// requests a second each to a Deployment of 4 testapp pods through its
// Service (kube-proxy), one over kept-alive connections and one opening a
// connection per request, while kubectl rejuv restart deployment/web
// recreates every pod's container in place, with Rejuv's defaults. The pods
// have the readiness gate because a RecreatePolicy (a nightly restart)
// selected them when they were created. Not one request fails; the premise
// is checked: every pod was recreated in place exactly once while the
// clients sent, taken out of service first.
func TestRollingRestartThroughAServiceFailsNoRequest(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := newNamespace(t)
	asEditor(t, ns)
	web := map[string]string{"app": "web"}
	nightly := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "nightly"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: web},
			Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"},
		},
	}
	if err := c.Create(ctx, nightly); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the manager to see the policy", func() bool {
		return readPolicy(t, c, ns, "nightly").Status.ObservedGeneration == 1
	})
	url := serviceFor(t, c, ns, "web", web)
	before := testappDeployment(t, c, ns, "web", 4)
	for _, p := range before {
		if !pods.HasReadinessGate(p) {
			t.Fatalf("pod %s has no readiness gate although policy nightly selected it when it was created", p.Name)
		}
	}
	answered(t, url, before)

	streams := map[string]*traffic.Stream{}
	for name, keepAlive := range map[string]bool{"kept-alive connections": true, "a connection per request": false} {
		// Bounded: it stops by itself after three minutes' worth.
		s, err := traffic.Start(url, "before", traffic.Options{Rate: 200, KeepAlive: keepAlive, Limit: 200 * 180})
		if err != nil {
			t.Fatal(err)
		}
		streams[name] = s
	}
	stopping := false
	stop := func() map[string]*traffic.Report {
		stopping = true
		out := map[string]*traffic.Report{}
		for name, s := range streams {
			out[name] = s.Stop()
		}
		return out
	}
	defer func() {
		if !stopping {
			stop()
		}
	}()
	time.Sleep(5 * time.Second)
	phase := func(name string) {
		for _, s := range streams {
			s.Phase(name)
		}
	}
	phase("during")
	unavailable := watchUnavailable(t, c, ns, web)
	run := kubectlRejuv(t, ns, "restart", "deployment/web", "--wait", "--timeout", "4m")
	out := unavailable()
	phase("after")
	if run.code != 0 {
		t.Fatalf("kubectl rejuv restart exited %d", run.code)
	}
	if strings.Contains(run.stderr, "no readiness gate") {
		t.Errorf("kubectl rejuv restart warned of pods without the readiness gate:\n%s", run.stderr)
	}
	after := time.Now()
	waitWithin(t, fmt.Sprintf("%d requests from each client", requestsPerStream), 3*time.Minute, func() bool {
		for _, s := range streams {
			if s.Sent() < requestsPerStream {
				return false
			}
		}
		return time.Since(after) > 5*time.Second
	})
	reports := stop()

	// The premise: every pod recreated in place, once, while the clients
	// sent; each taken out of service for the default unready grace first.
	p := readPolicy(t, c, ns, "restart-deployment-web")
	if p.Status.Run == nil || p.Status.Run.State != v1alpha1.RunCompleted {
		t.Fatalf("run %+v, want Completed", p.Status.Run)
	}
	recreatedOncePerPod(t, c, ns, "restart-deployment-web", "app=web", before, p.Status.Run)
	for _, crr := range policyRequests(t, c, ns, "restart-deployment-web") {
		s := crr.Spec.Strategy
		if s == nil || s.UnreadyGracePeriodSeconds == nil || *s.UnreadyGracePeriodSeconds != policyspec.DefaultUnreadyGraceSeconds {
			t.Errorf("request %s has strategy %+v; want the default unready grace", crr.Name, s)
		}
		if !meta.IsStatusConditionTrue(crr.Status.Conditions, v1beta1.ConditionPreRecreateGrace) {
			t.Errorf("request %s never took pod %s out of service: %+v", crr.Name, crr.Spec.PodName, crr.Status.Conditions)
		}
	}
	if out.most > 1 {
		t.Errorf("%d pods out of service at once; the Deployment's maxUnavailable (25%% of 4) allows 1: %s", out.most, out.worst)
	}

	for name, r := range reports {
		sent, failed := r.Total()
		b, d, a := r.Phase("before"), r.Phase("during"), r.Phase("after")
		t.Logf("%s: %d sent, %d failed; p50/p99/max before %s/%s/%s, during %s/%s/%s (%d sent), after %s/%s/%s",
			name, sent, failed, b.P50, b.P99, b.Max, d.P50, d.P99, d.Max, d.Sent, a.P50, a.P99, a.Max)
		if sent < requestsPerStream {
			t.Errorf("%s: %d requests sent, want at least %d", name, sent, requestsPerStream)
		}
		if failed > 0 {
			t.Errorf("%s: %d of %d requests failed: %s", name, failed, sent, strings.Join(r.Failures(), "; "))
		}
	}
	// Back in service: new connections reach every pod again. (Kept-alive
	// connections stay where they are, as with any Service: the restarted
	// pods' clients reconnected to the others.)
	for _, pod := range before {
		if reports["a connection per request"].LastAnswered("testapp " + pod.Name).Before(after) {
			t.Errorf("pod %s answered no new connection after the restart", pod.Name)
		}
	}
}

// serviceFor creates a ClusterIP Service on port 80 for the testapp pods
// of selector and returns its URL.
func serviceFor(t *testing.T, c client.Client, ns, name string, selector map[string]string) string {
	t.Helper()
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.ServiceSpec{
			Selector: selector,
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}
	if err := c.Create(context.Background(), svc); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://%s/", svc.Spec.ClusterIP)
}

// answered waits up to a minute until the Service at url has answered
// from every pod of want.
func answered(t *testing.T, url string, want map[string]*corev1.Pod) {
	t.Helper()
	var bodies []string
	for name := range want {
		bodies = append(bodies, "testapp "+name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := traffic.WaitAnswered(ctx, url, bodies); err != nil {
		t.Fatal(err)
	}
}
