package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/config/installfile"
)

// build runs kustomize on dir as kubectl apply -k does; the objects are
// checked with the same helpers as the Helm chart's rendering.
func build(t *testing.T, dir string) rendering {
	t.Helper()
	out, err := installfile.Build(dir)
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, "kustomize build "+dir, out)
}

// overlay writes a kustomization in a new directory that builds on the
// given directories of config/ and returns the directory.
func overlay(t *testing.T, body string, bases ...string) string {
	t.Helper()
	dir := t.TempDir()
	here, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	args := make([]any, len(bases))
	for i, b := range bases {
		rel, err := filepath.Rel(dir, filepath.Join(here, b))
		if err != nil {
			t.Fatal(err)
		}
		args[i] = rel
	}
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), fmt.Appendf(nil, body, args...), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// withoutNamespaces is the rendering less its Namespace objects, which a
// Helm release does not have and checkNames does not expect.
func withoutNamespaces(r rendering) rendering {
	var out rendering
	for _, o := range r {
		if o["kind"] != "Namespace" {
			out = append(out, o)
		}
	}
	return out
}

func TestDefaultInstallIsComplete(t *testing.T) {
	r := build(t, "default")
	kinds := map[string]int{}
	for _, o := range r {
		kinds[str(o, "kind")]++
	}
	for kind, want := range map[string]int{"Namespace": 1, "CustomResourceDefinition": 2, "Deployment": 1, "DaemonSet": 1, "PodDisruptionBudget": 1,
		"Service": 3, "ServiceAccount": 2, "ClusterRole": 5, "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1,
		"MutatingWebhookConfiguration": 1, "ValidatingWebhookConfiguration": 1, "ValidatingAdmissionPolicy": 6, "ValidatingAdmissionPolicyBinding": 6} {
		if kinds[kind] != want {
			t.Errorf("config/default has %d %s, want %d (all: %v)", kinds[kind], kind, want, kinds)
		}
	}
	if r.find("Namespace", "", "rejuv-system") == nil {
		t.Error("config/default does not create its namespace rejuv-system")
	}
	checkFields(t, r)
	checkNames(t, withoutNamespaces(r), "rejuv-", "rejuv-system")
	checkReferences(t, r)
	// The install file is config/default as kubectl apply -k applies it.
	var names, want []string
	for _, o := range parse(t, "install.yaml", readFile(t, "install.yaml")) {
		names = append(names, str(o, "kind")+"/"+str(o, "metadata", "name"))
	}
	for _, o := range r {
		want = append(want, str(o, "kind")+"/"+str(o, "metadata", "name"))
	}
	if !slices.Equal(names, want) {
		t.Errorf("install.yaml holds %v,\nconfig/default builds %v (run make manifests)", names, want)
	}
}

// TestAnotherPrefixAndNamespaceKeepEveryReference: an overlay of
// config/default that renames everything (a second namePrefix, another
// namespace) leaves no reference pointing at the old names.
func TestAnotherPrefixAndNamespaceKeepEveryReference(t *testing.T) {
	r := build(t, overlay(t, "namespace: ops\nnamePrefix: acme-\nresources:\n- %s\n", "default"))
	checkNames(t, withoutNamespaces(r), "acme-rejuv-", "ops")
	checkReferences(t, r)
}

// TestRuntimeComponentsGiveTheDaemonTheirSocket: config/default mounts
// containerd's socket directory where the daemon looks for it (under
// --host-run-dir, /host/run); with a runtime's component added by one line,
// the daemon mounts that runtime's socket directory read-only and names its
// socket.
func TestRuntimeComponentsGiveTheDaemonTheirSocket(t *testing.T) {
	def := build(t, "default")
	vol := list(def.one(t, "DaemonSet"), "spec", "template", "spec", "volumes")
	mounts := list(def.container(t, "DaemonSet", "daemon"), "volumeMounts")
	if len(vol) != 1 || str(vol[0], "hostPath", "path") != "/run/containerd" || len(mounts) != 1 || str(mounts[0], "mountPath") != "/host/run/containerd" {
		t.Errorf("config/default's daemon mounts %v at %v, want the host's /run/containerd at /host/run/containerd", vol, mounts)
	}
	for component, socket := range map[string]string{
		"runtime-crio":        "/run/crio/crio.sock",
		"runtime-k3s":         "/run/k3s/containerd/containerd.sock",
		"runtime-cri-dockerd": "/run/cri-dockerd.sock",
	} {
		t.Run(component, func(t *testing.T) {
			r := build(t, overlay(t, "resources:\n- %s\ncomponents:\n- %s\n", "default", "components/"+component))
			checkDaemonSocket(t, r, socket)
			if mounts := list(r.container(t, "DaemonSet", "daemon"), "volumeMounts"); len(mounts) != 1 {
				t.Errorf("the daemon mounts %v, want the runtime's socket directory alone", mounts)
			}
		})
	}
}

// TestMonitoringComponentSelectsTheMetricsServices: the ServiceMonitors
// scrape the metrics Services, the PrometheusRule holds the alert rules,
// and the dashboards come in a ConfigMap for Grafana's sidecar; the
// ServiceMonitors and the PrometheusRule carry the label
// kube-prometheus-stack's Prometheus selects them by (release: its Helm
// release's name), kube-prometheus-stack by default, another with the
// labels: entry the component's comment shows.
func TestMonitoringComponentSelectsTheMetricsServices(t *testing.T) {
	r := build(t, overlay(t, "resources:\n- %s\ncomponents:\n- %s\n", "default", "components/monitoring"))
	checkReleaseLabel(t, r, "kube-prometheus-stack")
	checkReleaseLabel(t, build(t, overlay(t, "resources:\n- %s\ncomponents:\n- %s\nlabels:\n- pairs: {release: my-prometheus}\n", "default", "components/monitoring")), "my-prometheus")
	monitors := r.all("ServiceMonitor")
	if len(monitors) != 2 {
		t.Fatalf("%d ServiceMonitors, want the manager's and the daemons'", len(monitors))
	}
	for _, m := range monitors {
		_, ns, name := id(m)
		var matched []string
		for _, s := range r.all("Service") {
			all := str(s, "metadata", "namespace") == ns
			for k, v := range mapAt(m, "spec", "selector", "matchLabels") {
				all = all && str(s, "metadata", "labels", k) == v
			}
			if all {
				matched = append(matched, str(s, "metadata", "name"))
			}
		}
		if len(matched) != 1 || !strings.HasSuffix(matched[0], "-metrics") {
			t.Errorf("ServiceMonitor %s selects Services %v, want its metrics Service", name, matched)
		}
		if ep := list(m, "spec", "endpoints")[0]; str(ep, "port") != "metrics" || str(ep, "scheme") != "https" || mapAt(ep)["honorLabels"] != true {
			t.Errorf("ServiceMonitor %s endpoint %v, want port metrics over https, honoring the metrics' namespace label", name, ep)
		}
		// The Prometheus Operator names the job after the Service; the
		// alert rules select the jobs by these ends.
		if len(matched) == 1 && !strings.HasSuffix(matched[0], "healer-metrics") && !strings.HasSuffix(matched[0], "daemon-metrics") {
			t.Errorf("ServiceMonitor %s scrapes Service %s, whose job the alert rules do not select", name, matched[0])
		}
	}
	rules := r.all("PrometheusRule")
	if len(rules) != 1 {
		t.Fatalf("%d PrometheusRules, want 1", len(rules))
	}
	var plain map[string]any
	if err := yaml.Unmarshal(readFile(t, "prometheus/rules.yaml"), &plain); err != nil {
		t.Fatal(err)
	}
	if got := mapAt(rules[0], "spec")["groups"]; !reflect.DeepEqual(got, plain["groups"]) {
		t.Errorf("the PrometheusRule's groups differ from prometheus/rules.yaml's (run make manifests)")
	}
	if ns := str(rules[0], "metadata", "namespace"); ns != str(monitors[0], "metadata", "namespace") {
		t.Errorf("the PrometheusRule is in namespace %s, the ServiceMonitors in %s", ns, str(monitors[0], "metadata", "namespace"))
	}
	dashboards := r.find("ConfigMap", str(monitors[0], "metadata", "namespace"), "rejuv-dashboards")
	files, err := filepath.Glob("grafana/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if dashboards == nil || str(dashboards, "metadata", "labels", "grafana_dashboard") != "1" || len(mapAt(dashboards, "data")) != len(files) || len(files) != 3 {
		t.Errorf("dashboards ConfigMap %v, want one labelled grafana_dashboard holding the 3 dashboards of config/grafana", dashboards != nil)
	}
}

// checkReleaseLabel: every ServiceMonitor and PrometheusRule of r is
// labelled release: want, and no other object of Rejuv's but by an
// overlay's labels: entry.
func checkReleaseLabel(t *testing.T, r rendering, want string) {
	t.Helper()
	for _, kind := range []string{"ServiceMonitor", "PrometheusRule"} {
		for _, o := range r.all(kind) {
			if got := str(o, "metadata", "labels", "release"); got != want {
				t.Errorf("%s %s: label release=%q, want %q", kind, str(o, "metadata", "name"), got, want)
			}
		}
	}
	if want == "kube-prometheus-stack" {
		for _, o := range r {
			if kind := str(o, "kind"); kind != "ServiceMonitor" && kind != "PrometheusRule" && str(o, "metadata", "labels", "release") != "" {
				t.Errorf("%s %s is labelled release too", kind, str(o, "metadata", "name"))
			}
		}
	}
}

// TestImagesAreTaggedWithTheVersion: config/default names the images make
// images builds, tagged with the chart's appVersion.
func TestImagesAreTaggedWithTheVersion(t *testing.T) {
	version, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"rejuv-healer:" + version, "rejuv-daemon:" + version}
	var got []string
	for _, o := range build(t, "default") {
		for _, c := range list(o, "spec", "template", "spec", "containers") {
			got = append(got, str(c, "image"))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("config/default runs images %v, want %v", got, want)
	}
}

// TestCertManagerVariant: config/cert-manager serves cert-manager's
// certificate for the webhook Service and has cert-manager inject its CA
// wherever the manager would.
func TestCertManagerVariant(t *testing.T) {
	r := build(t, "cert-manager")
	cert := r.find("Certificate", "rejuv-system", "rejuv-serving-cert")
	if cert == nil {
		t.Fatal("no Certificate rejuv-system/rejuv-serving-cert")
	}
	var dnsNames []string
	for _, n := range list(cert, "spec", "dnsNames") {
		dnsNames = append(dnsNames, n.(string))
	}
	if want := []string{"rejuv-webhook-service.rejuv-system.svc", "rejuv-webhook-service.rejuv-system.svc.cluster.local"}; !slices.Equal(dnsNames, want) {
		t.Errorf("the Certificate names %v, want %v", dnsNames, want)
	}
	secret := str(cert, "spec", "secretName")
	if issuer := str(cert, "spec", "issuerRef", "name"); r.find("Issuer", "rejuv-system", issuer) == nil {
		t.Errorf("the Certificate's Issuer %s is not installed", issuer)
	}
	if flags := managerFlags(r.container(t, "Deployment", "manager")); flags["--cert-management"] != "external" {
		t.Errorf("manager flags %v lack --cert-management=external", flags)
	}
	certs := list(r.one(t, "Deployment"), "spec", "template", "spec", "volumes")[0]
	if str(certs, "name") != "certs" || str(certs, "secret", "secretName") != secret || at(certs, "emptyDir") != nil {
		t.Errorf("manager volume %v, want certs from Secret %s", certs, secret)
	}
	want := "rejuv-system/rejuv-serving-cert"
	for _, o := range []object{
		r.find("MutatingWebhookConfiguration", "", "rejuv-mutating-webhook-configuration"),
		r.find("ValidatingWebhookConfiguration", "", "rejuv-validating-webhook-configuration"),
		r.find("CustomResourceDefinition", "", "containerrecreaterequests.apps.kruise.io"),
	} {
		kind, _, name := id(o)
		if got := str(o, "metadata", "annotations", "cert-manager.io/inject-ca-from"); got != want {
			t.Errorf("%s %s: inject-ca-from %q, want %q", kind, name, got, want)
		}
	}
	if crd := r.find("CustomResourceDefinition", "", "containerrecreaterequests.apps.kruise.io"); str(crd, "metadata", "annotations", "controller-gen.kubebuilder.io/version") == "" {
		t.Error("the CRD lost controller-gen's annotation")
	}
	checkReferences(t, r)
}

// TestOpenKruiseVariant: config/openkruise is config/default less what an
// installed OpenKruise has (the request CRD, the request and pod webhooks,
// the request-authorization policy, the daemon and its admission policy,
// the policy over the manager's pod status writes), with a manager that creates
// v1alpha1 requests, and rights cut to that.
func TestOpenKruiseVariant(t *testing.T) {
	r := build(t, "openkruise")
	def := build(t, "default")
	removed := []string{
		"CustomResourceDefinition//containerrecreaterequests.apps.kruise.io",
		"MutatingWebhookConfiguration//rejuv-mutating-webhook-configuration",
		"ValidatingAdmissionPolicy//rejuv-request-authorization", "ValidatingAdmissionPolicyBinding//rejuv-request-authorization",
		"ValidatingAdmissionPolicy//rejuv-daemon-scope", "ValidatingAdmissionPolicyBinding//rejuv-daemon-scope",
		"ValidatingAdmissionPolicy//rejuv-status-annotations", "ValidatingAdmissionPolicyBinding//rejuv-status-annotations",
		"ValidatingAdmissionPolicy//rejuv-manager-pod-status", "ValidatingAdmissionPolicyBinding//rejuv-manager-pod-status",
		"DaemonSet/rejuv-system/rejuv-daemon", "ServiceAccount/rejuv-system/rejuv-daemon", "Service/rejuv-system/rejuv-daemon-metrics",
		"ClusterRole//rejuv-daemon", "ClusterRoleBinding//rejuv-daemon",
	}
	var got, want []string
	for _, o := range r {
		kind, ns, name := id(o)
		got = append(got, kind+"/"+ns+"/"+name)
	}
	for _, o := range def {
		kind, ns, name := id(o)
		if key := kind + "/" + ns + "/" + name; !slices.Contains(removed, key) {
			want = append(want, key)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("config/openkruise installs %v,\nwant config/default's objects less %v", got, removed)
	}
	var hooks []string
	for _, w := range r.webhooks() {
		hooks = append(hooks, str(w, "name"))
	}
	if !slices.Equal(hooks, []string{"vrp.rejuv.dev"}) {
		t.Errorf("webhooks %v, want the RecreatePolicy validation alone", hooks)
	}
	// The manager's flags are config/default's (the patch replaces the
	// list) but the mutating webhook configuration it has none of, and
	// --crr-executor.
	flags := managerFlags(r.container(t, "Deployment", "manager"))
	wantFlags := managerFlags(def.container(t, "Deployment", "manager"))
	delete(wantFlags, "--mutating-webhook-configuration")
	wantFlags["--crr-executor"] = "openkruise"
	if !maps.Equal(flags, wantFlags) {
		t.Errorf("manager flags %v, want %v", flags, wantFlags)
	}
	if got := str(r.find("Namespace", "", "rejuv-system"), "metadata", "labels", "pod-security.kubernetes.io/enforce"); got != "restricted" {
		t.Errorf("namespace rejuv-system enforces Pod Security %q, want restricted (no daemon mounts the host)", got)
	}
	// The manager's rights: on requests only what the policy controller
	// does, and nothing of the executor's.
	for _, role := range append(r.all("ClusterRole"), r.all("Role")...) {
		name := str(role, "metadata", "name")
		for _, rule := range list(role, "rules") {
			for _, res := range list(rule, "resources") {
				group := list(rule, "apiGroups")[0]
				verbs := fmt.Sprint(list(rule, "verbs"))
				switch {
				case group == "apps.kruise.io" && (name != "rejuv-healer" || res != "containerrecreaterequests" || verbs != "[create get list watch]"):
					t.Errorf("%s %s grants %s %s on %s", str(role, "kind"), name, verbs, res, group)
				case slices.Contains([]any{"nodes", "pods/status", "customresourcedefinitions", "mutatingwebhookconfigurations"}, res):
					t.Errorf("%s %s grants %s on %s, which only executing requests needs", str(role, "kind"), name, verbs, res)
				}
			}
		}
	}
	checkFields(t, r)
	checkNames(t, withoutNamespaces(r), "rejuv-", "rejuv-system")
	checkReferences(t, r)
}
