package e2e

import (
	"context"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/config/dashboards"
	"github.com/rejuv-dev/rejuv/test/catalogue"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// wrongContainer is a rule that fails for every pod: it names a container
// the pod does not have.
const wrongContainer = "package wrong\nimport rego.v1\nrecreate contains \"db\" if true\n"

// TestDashboardsAndAlertsOnARealPrometheus: a real Prometheus scrapes the
// installed manager and daemon at the endpoints of their metrics Services,
// with a ServiceAccount's token bound to the shipped metrics reader role, and evaluates the shipped alert rules, while a manual
// request, two failing requests, a scheduled rolling run, a rule's
// recreation, a failing rule and a policy that halts happen. Then every
// query of every dashboard panel returned data, every dashboard variable
// has values, every alert rule evaluates without error, the halted-policy
// and failing-recreation alerts fired, and every metric the binaries
// serve is in the catalogue.
func TestDashboardsAndAlertsOnARealPrometheus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := rejuvStack(t).Client
	start := time.Now()
	api := startRejuvPrometheus(t)
	waitWithin(t, "Prometheus scraping both manager replicas and every node's daemon", 2*time.Minute, func() bool {
		return count(t, api, `up{job="rejuv-healer-metrics"} == 1`) == 2 && count(t, api, `up{job="rejuv-daemon-metrics"} == 1`) == len(cluster.Nodes())
	})

	ns := newNamespace(t)
	// A request by hand.
	manual := createPod(t, ns, testappPod("manual"))
	byHand := newRequest(ns, "by-hand", manual.Name, "app")
	if err := c.Create(ctx, byHand); err != nil {
		t.Fatal(err)
	}
	// A request the webhook refuses: no container.
	if err := c.Create(ctx, newRequest(ns, "nothing", manual.Name)); !apierrors.IsInvalid(err) {
		t.Errorf("a request without containers: %v, want Invalid", err)
	}
	// Two requests whose new container never gets ready: they fail at
	// their deadline, in flight long enough to be counted.
	var failing []*v1beta1.ContainerRecreateRequest
	for i := range 2 {
		pod := createPod(t, ns, controlledPod(fmt.Sprintf("stuck-%d", i)))
		execIn(t, ns, pod.Name, "side", "sh", "-c", "echo ready=false > /ctl/app")
		crr := newRequest(ns, fmt.Sprintf("fails-%d", i), pod.Name, "app")
		crr.Spec.ActiveDeadlineSeconds = ptr.To[int64](20)
		if err := c.Create(ctx, crr); err != nil {
			t.Fatal(err)
		}
		failing = append(failing, crr)
	}
	// A scheduled rolling run over two pods, one at a time, 20 seconds
	// after the policy's creation.
	labelledPods(t, ns, "web", 2)
	nightly := rollingPolicy(ns, "nightly", "web")
	nightly.Spec.Schedule.Cron = "@every 20s"
	createPolicy(t, nightly)
	// A rule's recreation, beside a rule that fails and a memory rule
	// without its data yet.
	healed := labelledPods(t, ns, "heal", 1)
	heal := annotationPolicy(ns, "heal", "heal", func(s *v1alpha1.RecreatePolicySpec) {
		s.Rules = append(s.Rules, v1alpha1.Rule{Name: "wrong", Rego: wrongContainer},
			builtinPolicy(ns, "", "", "memory-leak", leakParams).Spec.Rules[0])
	})
	createPolicy(t, heal)
	annotatePod(t, c, healed[0])
	// A policy whose rules match all its three pods, over its 50%.
	haltPods := labelledPods(t, ns, "halt", 3)
	createPolicy(t, annotationPolicy(ns, "halt", "halt", func(s *v1alpha1.RecreatePolicySpec) {
		s.Limits.MaxMatchingPercent = new(int32(50))
	}))
	for _, pod := range haltPods {
		annotatePod(t, c, pod)
	}

	if got, _ := waitCompleted(t, c, byHand, time.Minute); got.Status.Result != v1beta1.ResultSucceeded {
		t.Errorf("the request by hand ended %s: %s", got.Status.Result, got.Status.Message)
	}
	for _, crr := range failing {
		if got, _ := waitCompleted(t, c, crr, time.Minute); got.Status.Result != v1beta1.ResultFailed {
			t.Errorf("request %s ended %s, want Failed", crr.Name, got.Status.Result)
		}
	}
	if run := finishRun(t, c, ns, "nightly"); run.State != v1alpha1.RunCompleted || run.Recreated != 2 {
		t.Errorf("the scheduled run: %+v, want Completed with 2 pods recreated", run)
	}
	waitWithin(t, "the rule's request to succeed", time.Minute, func() bool {
		crrs := policyRequests(t, c, ns, "heal")
		return len(crrs) > 0 && crrs[0].Status.Result == v1beta1.ResultSucceeded
	})
	waitWithin(t, "policy halt to halt", time.Minute, func() bool {
		cond := meta.FindStatusCondition(readPolicy(t, c, ns, "halt").Status.Conditions, v1alpha1.ConditionHalted)
		return cond != nil && cond.Status == metav1.ConditionTrue
	})

	// The alerts a user would be paged by.
	waitWithin(t, "RejuvPolicyHalted and RejuvRecreationsFailing to fire", 2*time.Minute, func() bool {
		return firing(t, api, "RejuvPolicyHalted", ns, "halt") && firing(t, api, "RejuvRecreationsFailing", ns, "")
	})
	t.Logf("RejuvPolicyHalted and RejuvRecreationsFailing fire %s after the test's start", time.Since(start).Round(time.Second))
	// The halt's candidates go away: the gate's holds end and are timed.
	for _, pod := range haltPods {
		unannotatePod(t, c, pod)
	}
	waitWithin(t, "the halt's holds to be timed", time.Minute, func() bool {
		return count(t, api, fmt.Sprintf(`rejuv_policy_held_back_seconds_count{namespace=%q, policy="halt", gate="Halted"} > 0`, ns)) == 1
	})
	// One more evaluation of the rules after the last scrape.
	time.Sleep(2 * harness.PrometheusScrapeInterval)

	checkAlertRules(t, api)
	checkDashboards(t, api, start)
	checkServedMetricsAreCatalogued(t, api)
}

// startRejuvPrometheus starts the harness's Prometheus as an operator
// would set one up: the token of a ServiceAccount bound to the shipped
// metrics reader role scrapes the endpoints of Rejuv's metrics Services,
// and the shipped alert rules are loaded. Debian's Prometheus has no
// Kubernetes discovery: the test reads the Services' EndpointSlices every
// scrape interval, as that discovery would, and hands Prometheus the
// targets with the labels the Prometheus Operator gives them (the job is
// the Service's name).
func startRejuvPrometheus(t *testing.T) promv1.API {
	t.Helper()
	ctx := context.Background()
	kube := rejuvStack(t).Kube
	token, err := rejuvStack(t).ScraperToken(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	prom, err := cluster.StartPrometheus(ctx, harness.PrometheusOptions{
		ServiceAccountToken: token,
		RuleFiles:           []string{filepath.Join(root, "config", "prometheus", "rules.yaml")},
	})
	if err != nil {
		t.Fatal(err)
	}
	discover := func() error {
		groups, err := metricsTargets(ctx, kube)
		if err != nil {
			return err
		}
		return prom.SetTargets(groups)
	}
	if err := discover(); err != nil {
		_ = prom.Stop()
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(harness.PrometheusScrapeInterval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if err := discover(); err != nil {
					t.Logf("discover the metrics endpoints: %v", err)
				}
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		<-done
		_ = prom.Stop()
	})
	pc, err := promapi.NewClient(promapi.Config{Address: prom.URL})
	if err != nil {
		t.Fatal(err)
	}
	return promv1.NewAPI(pc)
}

// metricsTargets are the endpoints of the port named metrics of every
// Service in Rejuv's namespace, a group per Service and pod.
func metricsTargets(ctx context.Context, kube kubernetes.Interface) ([]harness.TargetGroup, error) {
	list, err := kube.DiscoveryV1().EndpointSlices(deploy.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list the EndpointSlices of %s: %w", deploy.Namespace, err)
	}
	var groups []harness.TargetGroup
	for _, es := range list.Items {
		service := es.Labels[discoveryv1.LabelServiceName]
		for _, port := range es.Ports {
			if port.Name == nil || *port.Name != "metrics" || port.Port == nil {
				continue
			}
			for _, ep := range es.Endpoints {
				labels := map[string]string{"job": service, "service": service, "namespace": deploy.Namespace}
				if ep.TargetRef != nil {
					labels["pod"] = ep.TargetRef.Name
				}
				var targets []string
				for _, addr := range ep.Addresses {
					targets = append(targets, net.JoinHostPort(addr, strconv.Itoa(int(*port.Port))))
				}
				groups = append(groups, harness.TargetGroup{Targets: targets, Labels: labels})
			}
		}
	}
	return groups, nil
}

// count is how many series an instant query returns now.
func count(t *testing.T, api promv1.API, query string) int {
	t.Helper()
	v, _, _, err := api.Query(context.Background(), query, time.Now())
	if err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	vec, ok := v.(model.Vector)
	if !ok {
		t.Fatalf("query %s: %s, want a vector", query, v.Type())
	}
	return len(vec)
}

// firing tells whether alert fires for namespace (and policy, when set).
func firing(t *testing.T, api promv1.API, alert, namespace, policy string) bool {
	t.Helper()
	alerts, err := api.Alerts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range alerts.Alerts {
		if string(a.Labels["alertname"]) == alert && string(a.Labels["namespace"]) == namespace &&
			(policy == "" || string(a.Labels["policy"]) == policy) && a.State == promv1.AlertStateFiring {
			return true
		}
	}
	return false
}

func unannotatePod(t *testing.T, c client.Client, pod *corev1.Pod) {
	t.Helper()
	patchPod(t, c, pod, func(p *corev1.Pod) { delete(p.Annotations, "rejuv.test/recreate") })
}

// checkAlertRules: Prometheus loaded every shipped alert and evaluated
// each without error.
func checkAlertRules(t *testing.T, api promv1.API) {
	t.Helper()
	rules, err := api.Rules(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			a, ok := r.(promv1.AlertingRule)
			if !ok {
				continue
			}
			n++
			if a.Health != promv1.RuleHealthGood || a.LastError != "" {
				t.Errorf("alert %s: health %s, error %q", a.Name, a.Health, a.LastError)
			}
		}
	}
	if n < 10 {
		t.Errorf("Prometheus evaluates %d alert rules, want those of config/prometheus/rules.yaml", n)
	}
}

// checkDashboards: every panel's queries, over the test's time and with
// every variable at All, returned a number at some step; every query
// variable has values.
func checkDashboards(t *testing.T, api promv1.API, start time.Time) {
	t.Helper()
	ctx := context.Background()
	end := time.Now()
	vars := strings.NewReplacer(
		"$__rate_interval", "20s",
		"$__range", fmt.Sprintf("%ds", int(end.Sub(start).Seconds())+1),
		`"$namespace"`, `".*"`, `"$policy"`, `".*"`, `"$instance"`, `".*"`,
	)
	all, err := dashboards.All()
	if err != nil {
		t.Fatal(err)
	}
	queries := 0
	for _, d := range all {
		for _, p := range d.Panels {
			for _, q := range p.Queries {
				queries++
				expr := vars.Replace(q)
				v, _, _, err := api.QueryRange(ctx, expr, promv1.Range{Start: start, End: end, Step: harness.PrometheusScrapeInterval})
				if err != nil {
					t.Errorf("%s: panel %q: %s: %v", d.File, p.Title, expr, err)
					continue
				}
				if !hasNumber(v) {
					t.Errorf("%s: panel %q: %s returned no data over the test", d.File, p.Title, expr)
				}
			}
		}
		for name, q := range d.Variables {
			metric, label, ok := labelValuesQuery(q)
			if !ok {
				t.Errorf("%s: variable %s: %s is not label_values(SELECTOR, LABEL)", d.File, name, q)
				continue
			}
			values, _, _, err := api.LabelValues(ctx, label, []string{strings.ReplaceAll(metric, "$namespace", ".*")}, start, end)
			if err != nil || len(values) == 0 {
				t.Errorf("%s: variable %s (%s): values %v, %v", d.File, name, q, values, err)
			}
		}
	}
	t.Logf("%d dashboards, %d panel queries returned data", len(all), queries)
}

// hasNumber tells whether a range query's answer has a value that is not
// NaN (a quantile of nothing).
func hasNumber(v model.Value) bool {
	m, ok := v.(model.Matrix)
	if !ok {
		return false
	}
	for _, s := range m {
		for _, p := range s.Values {
			if !math.IsNaN(float64(p.Value)) {
				return true
			}
		}
	}
	return false
}

// labelValuesQuery reads Grafana's label_values(SELECTOR, LABEL).
func labelValuesQuery(q string) (selector, label string, ok bool) {
	inner, found := strings.CutPrefix(q, "label_values(")
	inner, closed := strings.CutSuffix(inner, ")")
	i := strings.LastIndex(inner, ",")
	if !found || !closed || i < 0 {
		return "", "", false
	}
	return strings.TrimSpace(inner[:i]), strings.TrimSpace(inner[i+1:]), true
}

// documentedOthers are the families docs/metrics.md names by prefix, beside
// Rejuv's own.
var documentedOthers = []string{"controller_runtime_", "workqueue_", "rest_client_", "leader_election_", "certwatcher_", "go_", "process_"}

// checkServedMetricsAreCatalogued: every family Prometheus scraped from
// the manager and the daemon is in docs/metrics.md, Rejuv's own by name.
func checkServedMetricsAreCatalogued(t *testing.T, api promv1.API) {
	t.Helper()
	all, err := catalogue.All()
	if err != nil {
		t.Fatal(err)
	}
	own := catalogue.Series(all)
	names, _, _, err := api.LabelValues(context.Background(), "__name__", []string{`{job=~"rejuv-(healer|daemon)-metrics"}`}, time.Now().Add(-time.Hour), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, n := range names {
		name := string(n)
		switch {
		case strings.HasPrefix(name, "scrape_") || name == "up":
			// Prometheus's own, about the scrape.
		case strings.HasPrefix(name, "rejuv_"):
			seen++
			if _, ok := own[name]; !ok {
				t.Errorf("%s is served but not in docs/metrics.md", name)
			}
		case !slices.ContainsFunc(documentedOthers, func(p string) bool { return strings.HasPrefix(name, p) }):
			t.Errorf("%s is served but docs/metrics.md names no family it belongs to", name)
		}
	}
	if seen < 20 {
		t.Errorf("Prometheus holds %d of Rejuv's series names from the manager and the daemon, want most of the catalogue's", seen)
	}
}
