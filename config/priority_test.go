package config

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// daemonPriority is the priority class of the daemon's pods in r.
func daemonPriority(t *testing.T, r rendering) string {
	t.Helper()
	return str(r.one(t, "DaemonSet"), "spec", "template", "spec", "priorityClassName")
}

// TestCriticalPriorityQuotaAdmitsTheDaemon: the daemon runs at
// system-node-critical, which clusters such as GKE admit outside
// kube-system only under a ResourceQuota whose scope selects that
// priority class; config/components/critical-priority-quota adds one in
// the daemon's namespace, counting such pods alone, with room for a daemon
// on each of Kubernetes' largest supported cluster's 5,000 nodes.
func TestCriticalPriorityQuotaAdmitsTheDaemon(t *testing.T) {
	def := build(t, "default")
	if got := daemonPriority(t, def); got != "system-node-critical" {
		t.Fatalf("config/default's daemon has priority class %q, want system-node-critical", got)
	}
	if q := def.all("ResourceQuota"); len(q) != 0 {
		t.Errorf("config/default installs %d ResourceQuotas, want none", len(q))
	}
	r := build(t, overlay(t, "resources:\n- %s\ncomponents:\n- %s\n", "default", "components/critical-priority-quota"))
	quotas := r.all("ResourceQuota")
	if len(quotas) != 1 {
		t.Fatalf("%d ResourceQuotas, want 1", len(quotas))
	}
	q := quotas[0]
	if ns := str(q, "metadata", "namespace"); ns != str(r.one(t, "DaemonSet"), "metadata", "namespace") {
		t.Errorf("the ResourceQuota is in namespace %s, not the daemon's", ns)
	}
	if scopes := list(q, "spec", "scopes"); len(scopes) != 0 {
		t.Errorf("the ResourceQuota has scopes %v, want its scope selector alone", scopes)
	}
	expressions := list(q, "spec", "scopeSelector", "matchExpressions")
	if len(expressions) != 1 || str(expressions[0], "scopeName") != "PriorityClass" || str(expressions[0], "operator") != "In" ||
		!slices.Contains(list(expressions[0], "values"), any(daemonPriority(t, r))) {
		t.Errorf("the ResourceQuota selects %v, want the daemon's priority class %s", expressions, daemonPriority(t, r))
	}
	hard := mapAt(q, "spec", "hard")
	pods, err := resource.ParseQuantity(str(hard, "pods"))
	if len(hard) != 1 || err != nil || pods.Cmp(resource.MustParse("5000")) < 0 {
		t.Errorf("the ResourceQuota's hard limits %v (%v), want pods alone, at least 5000", hard, err)
	}
	checkNames(t, withoutNamespaces(r), "rejuv-", "rejuv-system")
	// docs/operations.md shows the same quota, for the Helm chart.
	var shown object
	for _, block := range regexp.MustCompile("(?ms)^```yaml\n(.*?)^```$").FindAllStringSubmatch(string(readFile(t, "../docs/operations.md")), -1) {
		if strings.Contains(block[1], "kind: ResourceQuota") {
			shown = parse(t, "docs/operations.md", []byte(block[1]))[0]
		}
	}
	if file := parse(t, "resource_quota.yaml", readFile(t, "components/critical-priority-quota/resource_quota.yaml"))[0]; !reflect.DeepEqual(shown, file) {
		t.Errorf("docs/operations.md shows the ResourceQuota %v,\nconfig/components/critical-priority-quota has %v", shown, file)
	}
}

// TestHelmDaemonPriorityClass: the chart's daemon.priorityClassName sets
// the daemon's priority class, and empty leaves it out.
func TestHelmDaemonPriorityClass(t *testing.T) {
	helm := ensureHelm(t)
	for value, want := range map[string]string{"node-helpers": "node-helpers", "": ""} {
		out := runHelm(t, helm, "template", "rejuv", chartDir, "--namespace", "rejuv-system", "--set", "daemon.priorityClassName="+value)
		if got := daemonPriority(t, parse(t, "helm template", out)); got != want {
			t.Errorf("daemon.priorityClassName=%q: the daemon's priority class is %q, want %q", value, got, want)
		}
	}
}
