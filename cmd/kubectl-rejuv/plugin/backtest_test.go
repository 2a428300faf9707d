package plugin

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

func TestSpansCountDays(t *testing.T) {
	for in, want := range map[string]time.Duration{"7d": 7 * 24 * time.Hour, "1d12h": 36 * time.Hour, "90m": 90 * time.Minute, "31d": 31 * 24 * time.Hour} {
		if got, err := parseSpan(in); err != nil || got != want {
			t.Errorf("parseSpan(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
}

// TestASetChangesTheRulesThatHaveTheParameter: PARAM=VALUE sets every
// built-in rule that has the parameter, RULE.PARAM one; numbers stay
// numbers, durations and quantities are strings; a parameter no rule has
// is refused, naming it.
func TestASetChangesTheRulesThatHaveTheParameter(t *testing.T) {
	p := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Name: "leaks"}, Spec: v1alpha1.RecreatePolicySpec{Rules: []v1alpha1.Rule{
		{Name: "leak", Builtin: "memory-leak"}, {Name: "near", Builtin: "memory-near-limit"}, {Name: "inline", Rego: "package x"},
	}}}
	v, err := parseVariant("minGrowthPerHour=40Mi,leak.minFit=0.9")
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.apply(p)
	if err != nil {
		t.Fatal(err)
	}
	leak := got.Spec.Rules[0].Parameters
	if string(leak["minGrowthPerHour"].Raw) != `"40Mi"` || string(leak["minFit"].Raw) != "0.9" {
		t.Errorf("memory-leak's parameters %v; want minGrowthPerHour \"40Mi\" and minFit 0.9", leak)
	}
	if len(got.Spec.Rules[1].Parameters) != 0 || p.Spec.Rules[0].Parameters != nil {
		t.Errorf("memory-near-limit got %v, the policy given %v; want neither changed", got.Spec.Rules[1].Parameters, p.Spec.Rules[0].Parameters)
	}
	v, _ = parseVariant("near.minGrowthPerHour=1Mi")
	if _, err := v.apply(p); err == nil || !strings.Contains(err.Error(), "no built-in rule of RecreatePolicy leaks has the parameter minGrowthPerHour") {
		t.Errorf("a parameter the named rule lacks: %v", err)
	}
}

func TestTheManagersPrometheusIsReachedThroughTheServiceProxy(t *testing.T) {
	for address, want := range map[string]string{
		"http://prometheus.monitoring:9090":                 "https://api:6443/api/v1/namespaces/monitoring/services/prometheus:9090/proxy",
		"http://prometheus.monitoring.svc.cluster.local:80": "https://api:6443/api/v1/namespaces/monitoring/services/prometheus:80/proxy",
		"https://thanos.obs.svc/prefix/":                    "https://api:6443/api/v1/namespaces/obs/services/https:thanos:443/proxy/prefix",
		"http://prometheus:9090":                            "https://api:6443/api/v1/namespaces/rejuv-system/services/prometheus:9090/proxy",
	} {
		if got, err := serviceProxy("https://api:6443", address, "rejuv-system"); err != nil || got != want {
			t.Errorf("serviceProxy(%s) = %q, %v; want %q", address, got, err, want)
		}
	}
	if _, err := serviceProxy("https://api:6443", "http://prom.example.com:9090", "rejuv-system"); err == nil {
		t.Error("an address outside the cluster was taken for a Service's")
	}
	manager := managerArgs{args: []string{"/healer", "--leader-elect", "--prometheus-url", "http://prometheus.monitoring:9090", "--memory-window=2h"}}
	if got := manager.value("--prometheus-url"); got != "http://prometheus.monitoring:9090" {
		t.Errorf("the manager's --prometheus-url read as %q", got)
	}
	bt := &policyBacktest{}
	opt, err := bt.sampling(manager)
	if err != nil || opt.Window != 2*time.Hour || opt.Interval != 30*time.Second {
		t.Errorf("sampling %+v, %v; want the manager's window of 2h and the default interval of 30s", opt, err)
	}
	bt.window = 10 * time.Second
	if _, err := bt.sampling(manager); err == nil || !strings.Contains(err.Error(), "--memory-window 10s is shorter than two samples") {
		t.Errorf("a window of 10s: %v", err)
	}
}
