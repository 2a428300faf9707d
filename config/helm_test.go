package config

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// The Helm chart must install what config/default installs, named after
// the release: these tests lint and render it with the Helm the Makefile
// pins and check what it renders.

const chartDir = "helm/rejuv"

type object = map[string]any

// rendering is a set of objects, as helm template or kustomize made them.
type rendering []object

func TestHelmChart(t *testing.T) {
	helm := ensureHelm(t)
	install := parse(t, "install.yaml", readFile(t, "install.yaml"))
	tests := []struct {
		name, release, namespace string
		values                   []string
		// prefix starts the name of every object but the CRDs.
		prefix string
		// socket is the CRI socket the daemon is given, as the host has it.
		socket      string
		certManager bool
		monitors    bool
		timeout     float64
		// unauthorized: requestAuthorization=false leaves the
		// request-authorization policy out.
		unauthorized bool
		// apiServer are the addresses the NetworkPolicy admits to the
		// webhooks; nil without one.
		apiServer []string
		// healerImage and daemonImage are the images the manager and the
		// daemon run.
		healerImage, daemonImage string
		// openKruise: crrExecutor=openkruise installs what
		// config/openkruise does, with no daemon.
		openKruise bool
	}{{
		name: "defaults", release: "rejuv", namespace: "rejuv-system",
		prefix: "rejuv-", socket: "/run/containerd/containerd.sock",
		healerImage: "rejuv-healer:v0.1.0", daemonImage: "rejuv-daemon:v0.1.0",
	}, {
		name: "cert-manager, ServiceMonitors, CRI-O, release acme in ops", release: "acme", namespace: "ops",
		values: []string{
			"certManager.enabled=true",
			"metrics.serviceMonitor.enabled=true",
			"metrics.prometheusRule.enabled=true",
			"metrics.prometheusRule.labels.release=kube-prometheus",
			"metrics.grafanaDashboards.enabled=true",
			"metrics.grafanaDashboards.namespace=monitoring",
			"daemon.runtimeSocket=/var/run/crio/crio.sock",
			"webhook.timeoutSeconds=7",
			"networkPolicy.enabled=true",
			"networkPolicy.apiServerCIDRs={10.0.0.10/32,10.0.0.11/32}",
			"image.healer.repository=registry.example.com/team/rejuv-healer",
			"image.healer.digest=sha256:" + strings.Repeat("a", 64),
			"image.daemon.repository=registry.example.com/team/rejuv-daemon",
			"image.daemon.tag=v9.9.9",
		},
		prefix: "acme-rejuv-", socket: "/var/run/crio/crio.sock", certManager: true, monitors: true, timeout: 7,
		apiServer:   []string{"10.0.0.10/32", "10.0.0.11/32"},
		healerImage: "registry.example.com/team/rejuv-healer@sha256:" + strings.Repeat("a", 64),
		daemonImage: "registry.example.com/team/rejuv-daemon:v9.9.9",
	}, {
		name: "cert-manager with a ClusterIssuer, release rejuv-canary in canary", release: "rejuv-canary", namespace: "canary",
		values: []string{
			"certManager.enabled=true",
			"certManager.issuerRef.kind=ClusterIssuer",
			"certManager.issuerRef.name=company-ca",
			"requestAuthorization=false",
		},
		prefix: "rejuv-canary-", socket: "/run/containerd/containerd.sock", certManager: true, unauthorized: true,
	}, {
		name: "beside OpenKruise", release: "rejuv", namespace: "rejuv-system",
		values: []string{"crrExecutor=openkruise"},
		prefix: "rejuv-", unauthorized: true, openKruise: true,
		healerImage: "rejuv-healer:v0.1.0",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sets []string
			for _, v := range tt.values {
				sets = append(sets, "--set", v)
			}
			runHelm(t, helm, append([]string{"lint", "--strict", chartDir, "--namespace", tt.namespace}, sets...)...)
			out := runHelm(t, helm, append([]string{"template", tt.release, chartDir, "--namespace", tt.namespace}, sets...)...)
			r := parse(t, "helm template", out)

			checkFields(t, r)
			checkNames(t, r, tt.prefix, tt.namespace)
			checkReferences(t, r)
			checkCertificates(t, r, tt.certManager)
			checkServiceMonitors(t, r, tt.monitors)
			checkPrometheusRule(t, r, tt.monitors, tt.prefix, tt.namespace)
			checkDashboards(t, r, tt.monitors, tt.prefix)
			if !tt.openKruise {
				checkDaemonSocket(t, r, tt.socket)
			}
			checkNetworkPolicy(t, r, tt.apiServer)
			checkPrepareUninstall(t, r, tt.prefix, tt.namespace, !tt.openKruise)
			for _, c := range []struct{ kind, container, want string }{{"Deployment", "manager", tt.healerImage}, {"DaemonSet", "daemon", tt.daemonImage}} {
				if c.want == "" {
					continue
				}
				if got := str(r.container(t, c.kind, c.container), "image"); got != c.want {
					t.Errorf("%s's %s runs %s, want %s", c.kind, c.container, got, c.want)
				}
			}
			for _, w := range r.webhooks() {
				if got := w["timeoutSeconds"]; tt.timeout != 0 && got != tt.timeout {
					t.Errorf("webhook %s: timeoutSeconds %v, want %v", w["name"], got, tt.timeout)
				}
			}
			for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
				if got := r.find(kind, "", tt.prefix+"request-authorization") != nil; got == tt.unauthorized {
					t.Errorf("%s %srequest-authorization rendered: %t, want %t", kind, tt.prefix, got, !tt.unauthorized)
				}
			}
			switch {
			case tt.openKruise:
				checkSameAs(t, r, build(t, "openkruise"), "kustomize build config/openkruise")
			case tt.values == nil:
				checkSameAs(t, r, install, "config/install.yaml")
			}
		})
	}
}

// TestHelmRefusesAnUnknownCRRExecutor: a crrExecutor other than rejuv or
// openkruise stops the install, naming the value and the choices.
func TestHelmRefusesAnUnknownCRRExecutor(t *testing.T) {
	helm := ensureHelm(t)
	out, err := exec.CommandContext(t.Context(), helm, "template", "rejuv", chartDir, "--set", "crrExecutor=kruise").CombinedOutput()
	want := `crrExecutor: "kruise" is not "rejuv" or "openkruise"`
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("helm template with crrExecutor=kruise: %v\n%s\nwant a refusal saying %s", err, out, want)
	}
}

// checkFields decodes every object of a Kubernetes API strictly into its
// Go type, which rejects a field in the wrong place.
func checkFields(t *testing.T, r rendering) {
	t.Helper()
	types := map[string]func() any{
		"CustomResourceDefinition":         func() any { return &apiextensionsv1.CustomResourceDefinition{} },
		"ServiceAccount":                   func() any { return &corev1.ServiceAccount{} },
		"Service":                          func() any { return &corev1.Service{} },
		"ClusterRole":                      func() any { return &rbacv1.ClusterRole{} },
		"ClusterRoleBinding":               func() any { return &rbacv1.ClusterRoleBinding{} },
		"Role":                             func() any { return &rbacv1.Role{} },
		"RoleBinding":                      func() any { return &rbacv1.RoleBinding{} },
		"Deployment":                       func() any { return &appsv1.Deployment{} },
		"DaemonSet":                        func() any { return &appsv1.DaemonSet{} },
		"PodDisruptionBudget":              func() any { return &policyv1.PodDisruptionBudget{} },
		"MutatingWebhookConfiguration":     func() any { return &admissionregistrationv1.MutatingWebhookConfiguration{} },
		"ValidatingWebhookConfiguration":   func() any { return &admissionregistrationv1.ValidatingWebhookConfiguration{} },
		"ValidatingAdmissionPolicy":        func() any { return &admissionregistrationv1.ValidatingAdmissionPolicy{} },
		"ValidatingAdmissionPolicyBinding": func() any { return &admissionregistrationv1.ValidatingAdmissionPolicyBinding{} },
	}
	for _, o := range r {
		kind, _, name := id(o)
		newObject, ok := types[kind]
		if !ok {
			continue // cert-manager's and the Prometheus Operator's
		}
		data, err := yaml.Marshal(o)
		if err == nil {
			err = yaml.UnmarshalStrict(data, newObject())
		}
		if err != nil {
			t.Errorf("%s %s: %v", kind, name, err)
		}
	}
}

// checkNames checks that every object is named after the release and that
// every namespaced one is in the release's namespace (but the dashboards,
// when given another).
func checkNames(t *testing.T, r rendering, prefix, namespace string) {
	t.Helper()
	clusterScoped := []string{"CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding",
		"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
		"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"}
	for _, o := range r {
		kind, ns, name := id(o)
		if kind != "CustomResourceDefinition" && !strings.HasPrefix(name, prefix) {
			t.Errorf("%s %s: name does not start with %q", kind, name, prefix)
		}
		if slices.Contains(clusterScoped, kind) != (ns == "") {
			t.Errorf("%s %s: namespace %q", kind, name, ns)
		}
		// The dashboards go where Grafana's sidecar looks, when told.
		dashboards := kind == "ConfigMap" && str(o, "metadata", "labels", "grafana_dashboard") != ""
		if ns != "" && ns != namespace && !dashboards {
			t.Errorf("%s %s: in namespace %s, want the release's, %s", kind, name, ns, namespace)
		}
	}
}

// checkReferences checks that every name one object gives of another is
// an object of the rendering.
func checkReferences(t *testing.T, r rendering) {
	t.Helper()
	for _, w := range r.webhooks() {
		r.mustHaveService(t, "webhook "+str(w, "name"), mapAt(w, "clientConfig", "service"))
	}
	manager := r.container(t, "Deployment", "manager")
	flags := managerFlags(manager)
	// Beside OpenKruise, the request CRD, its conversion and the mutating
	// webhooks are OpenKruise's.
	executes := flags["--crr-executor"] != "openkruise"
	conversions := 0
	for _, crd := range r.all("CustomResourceDefinition") {
		if svc := mapAt(crd, "spec", "conversion", "webhook", "clientConfig", "service"); svc != nil {
			conversions++
			r.mustHaveService(t, "CRD "+str(crd, "metadata", "name")+" conversion", svc)
		}
	}
	if executes && conversions != 1 {
		t.Errorf("%d CRDs convert through a webhook, want 1 (ContainerRecreateRequest)", conversions)
	}
	if !executes && conversions != 0 {
		t.Errorf("%d CRDs convert through a webhook beside OpenKruise, want none", conversions)
	}

	configurations := map[any]string{"mutatingwebhookconfigurations": "MutatingWebhookConfiguration",
		"validatingwebhookconfigurations": "ValidatingWebhookConfiguration"}
	named := map[string]int{}
	for _, kind := range []string{"ClusterRole", "Role"} {
		for _, role := range r.all(kind) {
			for _, rule := range list(role, "rules") {
				for _, resource := range list(rule, "resources") {
					target, ok := configurations[resource]
					if !ok {
						continue
					}
					for _, name := range list(rule, "resourceNames") {
						named[target]++
						if r.find(target, "", name.(string)) == nil {
							t.Errorf("%s %s: rights on %s %s, which is not installed", kind, str(role, "metadata", "name"), target, name)
						}
					}
				}
			}
		}
	}
	kept := map[string]string{"--webhook-service": "Service", "--validating-webhook-configuration": "ValidatingWebhookConfiguration"}
	if executes {
		kept["--mutating-webhook-configuration"] = "MutatingWebhookConfiguration"
	}
	for _, kind := range kept {
		if kind != "Service" && named[kind] == 0 {
			t.Errorf("no role names a %s", kind)
		}
	}

	managerNS := str(r.one(t, "Deployment"), "metadata", "namespace")
	for flag, kind := range kept {
		name, ok := flags[flag]
		if !ok {
			t.Errorf("the manager has no %s flag", flag)
			continue
		}
		ns := ""
		if kind == "Service" {
			ns = managerNS
		}
		if r.find(kind, ns, name) == nil {
			t.Errorf("the manager's %s=%s names no %s of the rendering", flag, name, kind)
		}
	}

	for _, kind := range []string{"Deployment", "DaemonSet"} {
		for _, o := range r.all(kind) {
			sa := str(o, "spec", "template", "spec", "serviceAccountName")
			if r.find("ServiceAccount", str(o, "metadata", "namespace"), sa) == nil {
				t.Errorf("%s %s: ServiceAccount %q is not installed", kind, str(o, "metadata", "name"), sa)
			}
		}
	}
	for _, kind := range []string{"ClusterRoleBinding", "RoleBinding"} {
		for _, b := range r.all(kind) {
			refNS := ""
			if str(b, "roleRef", "kind") == "Role" {
				refNS = str(b, "metadata", "namespace")
			}
			if r.find(str(b, "roleRef", "kind"), refNS, str(b, "roleRef", "name")) == nil {
				t.Errorf("%s %s: roleRef %s %s is not installed", kind, str(b, "metadata", "name"), str(b, "roleRef", "kind"), str(b, "roleRef", "name"))
			}
			for _, s := range list(b, "subjects") {
				if r.find(str(s, "kind"), str(s, "namespace"), str(s, "name")) == nil {
					t.Errorf("%s %s: subject %s %s/%s is not installed", kind, str(b, "metadata", "name"), str(s, "kind"), str(s, "namespace"), str(s, "name"))
				}
			}
		}
	}
	// The policies that let the manager through know it by its
	// ServiceAccount, their bindings' parameter.
	managerAccount := str(r.one(t, "Deployment"), "spec", "template", "spec", "serviceAccountName")
	for _, b := range r.all("ValidatingAdmissionPolicyBinding") {
		if r.find("ValidatingAdmissionPolicy", "", str(b, "spec", "policyName")) == nil {
			t.Errorf("ValidatingAdmissionPolicyBinding %s: policy %s is not installed", str(b, "metadata", "name"), str(b, "spec", "policyName"))
		}
		if ref := mapAt(b, "spec", "paramRef"); ref != nil && (str(ref, "name") != managerAccount || str(ref, "namespace") != managerNS) {
			t.Errorf("ValidatingAdmissionPolicyBinding %s: parameter %s/%s, want the manager's ServiceAccount %s/%s",
				str(b, "metadata", "name"), str(ref, "namespace"), str(ref, "name"), managerNS, managerAccount)
		}
	}
}

// checkCertificates checks the webhooks' certificates: cert-manager's,
// for the webhook Service, mounted at the manager's --cert-dir and
// injected where the API server needs the CA; or the manager's own.
func checkCertificates(t *testing.T, r rendering, certManager bool) {
	t.Helper()
	flags := managerFlags(r.container(t, "Deployment", "manager"))
	injected := []object{}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "CustomResourceDefinition"} {
		for _, o := range r.all(kind) {
			if kind != "CustomResourceDefinition" || mapAt(o, "spec", "conversion", "webhook") != nil {
				injected = append(injected, o)
			}
		}
	}
	if !certManager {
		if len(r.all("Certificate")) != 0 || flags["--cert-management"] != "" {
			t.Errorf("cert-manager is disabled, yet there are Certificates or --cert-management=%s", flags["--cert-management"])
		}
		for _, o := range injected {
			if ann := str(o, "metadata", "annotations", "cert-manager.io/inject-ca-from"); ann != "" {
				t.Errorf("%s %s: inject-ca-from %s without cert-manager", o["kind"], str(o, "metadata", "name"), ann)
			}
		}
		return
	}
	cert := r.one(t, "Certificate")
	ns, name := str(cert, "metadata", "namespace"), str(cert, "metadata", "name")
	for _, w := range r.webhooks() {
		host := str(w, "clientConfig", "service", "name") + "." + str(w, "clientConfig", "service", "namespace") + ".svc"
		if !slices.Contains(list(cert, "spec", "dnsNames"), any(host)) {
			t.Errorf("Certificate %s: dnsNames %v lack %s, which webhook %s calls", name, list(cert, "spec", "dnsNames"), host, w["name"])
		}
	}
	for _, o := range injected {
		if got := str(o, "metadata", "annotations", "cert-manager.io/inject-ca-from"); got != ns+"/"+name {
			t.Errorf("%s %s: inject-ca-from %q, want %s/%s", o["kind"], str(o, "metadata", "name"), got, ns, name)
		}
	}
	if issuer := mapAt(cert, "spec", "issuerRef"); str(issuer, "kind") == "Issuer" && r.find("Issuer", ns, str(issuer, "name")) == nil {
		t.Errorf("Certificate %s: Issuer %s is not installed", name, str(issuer, "name"))
	}
	if flags["--cert-management"] != "external" || flags["--cert-dir"] == "" {
		t.Errorf("the manager runs with --cert-management=%q --cert-dir=%q, want external and the certificate's directory", flags["--cert-management"], flags["--cert-dir"])
	}
	volumes := map[string]string{}
	for _, v := range list(r.one(t, "Deployment"), "spec", "template", "spec", "volumes") {
		volumes[str(v, "name")] = str(v, "secret", "secretName")
	}
	mounted := false
	for _, m := range list(r.container(t, "Deployment", "manager"), "volumeMounts") {
		if str(m, "mountPath") == flags["--cert-dir"] && volumes[str(m, "name")] == str(cert, "spec", "secretName") {
			mounted = true
		}
	}
	if !mounted {
		t.Errorf("Secret %s of Certificate %s is not mounted at the manager's --cert-dir %s", str(cert, "spec", "secretName"), name, flags["--cert-dir"])
	}
}

// checkPrometheusRule checks that, when enabled, the chart renders the
// groups of prometheus/rules.yaml as they are, templates and all, with
// the labels asked for.
func checkPrometheusRule(t *testing.T, r rendering, enabled bool, prefix, namespace string) {
	t.Helper()
	rules := r.all("PrometheusRule")
	if want := map[bool]int{false: 0, true: 1}[enabled]; len(rules) != want {
		t.Fatalf("%d PrometheusRules, want %d", len(rules), want)
	}
	if !enabled {
		return
	}
	var plain map[string]any
	if err := yaml.Unmarshal(readFile(t, "prometheus/rules.yaml"), &plain); err != nil {
		t.Fatal(err)
	}
	if got := mapAt(rules[0], "spec")["groups"]; !reflect.DeepEqual(got, plain["groups"]) {
		t.Errorf("the PrometheusRule's groups differ from prometheus/rules.yaml's")
	}
	if name, ns := str(rules[0], "metadata", "name"), str(rules[0], "metadata", "namespace"); name != prefix+"alerts" || ns != namespace {
		t.Errorf("PrometheusRule %s/%s, want %s/%salerts", ns, name, namespace, prefix)
	}
	if got := str(rules[0], "metadata", "labels", "release"); got != "kube-prometheus" {
		t.Errorf("PrometheusRule label release=%q, want the one asked for", got)
	}
}

// checkDashboards checks that, when enabled, the chart renders a
// ConfigMap for Grafana's sidecar, in the namespace asked for, holding
// each dashboard of config/grafana as it is.
func checkDashboards(t *testing.T, r rendering, enabled bool, prefix string) {
	t.Helper()
	var maps []object
	for _, cm := range r.all("ConfigMap") {
		if str(cm, "metadata", "labels", "grafana_dashboard") != "" {
			maps = append(maps, cm)
		}
	}
	if want := map[bool]int{false: 0, true: 1}[enabled]; len(maps) != want {
		t.Fatalf("%d dashboard ConfigMaps, want %d", len(maps), want)
	}
	if !enabled {
		return
	}
	cm := maps[0]
	if name, ns := str(cm, "metadata", "name"), str(cm, "metadata", "namespace"); name != prefix+"dashboards" || ns != "monitoring" {
		t.Errorf("dashboards ConfigMap %s/%s, want monitoring/%sdashboards", ns, name, prefix)
	}
	files, err := filepath.Glob("grafana/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no dashboards in config/grafana (%v)", err)
	}
	data := mapAt(cm, "data")
	if len(data) != len(files) {
		t.Errorf("the ConfigMap holds %d dashboards, config/grafana %d", len(data), len(files))
	}
	for _, f := range files {
		if got, want := data[filepath.Base(f)], strings.TrimSuffix(string(readFile(t, f)), "\n"); got != want {
			t.Errorf("the ConfigMap's %s differs from config/%s", filepath.Base(f), f)
		}
	}
}

// checkServiceMonitors checks that each ServiceMonitor scrapes, over HTTPS
// with a token, the metrics port of exactly one Service.
func checkServiceMonitors(t *testing.T, r rendering, enabled bool) {
	t.Helper()
	monitors := r.all("ServiceMonitor")
	if want := map[bool]int{false: 0, true: 2}[enabled]; len(monitors) != want {
		t.Fatalf("%d ServiceMonitors, want %d", len(monitors), want)
	}
	for _, m := range monitors {
		name := str(m, "metadata", "name")
		selector := mapAt(m, "spec", "selector", "matchLabels")
		endpoint := list(m, "spec", "endpoints")[0]
		if str(endpoint, "scheme") != "https" || str(endpoint, "bearerTokenFile") == "" || mapAt(endpoint, "tlsConfig")["insecureSkipVerify"] != true || mapAt(endpoint)["honorLabels"] != true {
			t.Errorf("ServiceMonitor %s: endpoint %v, want https with a bearer token file and insecureSkipVerify, honoring the metrics' labels", name, endpoint)
		}
		var matched []string
		for _, svc := range r.all("Service") {
			if !slices.Contains(list(m, "spec", "namespaceSelector", "matchNames"), any(str(svc, "metadata", "namespace"))) {
				continue
			}
			labels := mapAt(svc, "metadata", "labels")
			if !subset(selector, labels) {
				continue
			}
			matched = append(matched, str(svc, "metadata", "name"))
			if !slices.ContainsFunc(list(svc, "spec", "ports"), func(p any) bool { return str(p, "name") == str(endpoint, "port") }) {
				t.Errorf("ServiceMonitor %s: Service %s has no port %s", name, str(svc, "metadata", "name"), str(endpoint, "port"))
			}
		}
		if len(matched) != 1 {
			t.Errorf("ServiceMonitor %s: selector %v matches Services %v, want one", name, selector, matched)
		}
	}
}

// checkDaemonSocket checks that the daemon is given the runtime's socket
// in the host directory it mounts read-only.
func checkDaemonSocket(t *testing.T, r rendering, socket string) {
	t.Helper()
	daemon := r.container(t, "DaemonSet", "daemon")
	var flag string
	for _, a := range list(daemon, "args") {
		if v, ok := strings.CutPrefix(a.(string), "--cri-socket="); ok {
			flag = v
		}
	}
	hostDirs := map[string]string{}
	for _, v := range list(r.one(t, "DaemonSet"), "spec", "template", "spec", "volumes") {
		hostDirs[str(v, "name")] = str(v, "hostPath", "path")
	}
	for _, m := range list(daemon, "volumeMounts") {
		if hostDirs[str(m, "name")] == path.Dir(socket) && at(m, "readOnly") == true &&
			path.Join(str(m, "mountPath"), path.Base(socket)) == flag {
			return
		}
	}
	t.Errorf("the daemon's --cri-socket=%s is not %s in a read-only mount of the host's %s", flag, socket, path.Dir(socket))
}

// checkSameAs checks that r installs the objects of kustomize's install
// (from source), but its Namespace (a release's namespace exists before
// the release), the same but for more labels and more arguments after the
// same ones.
func checkSameAs(t *testing.T, r, install rendering, source string) {
	t.Helper()
	var want, got []string
	for _, o := range install {
		if o["kind"] != "Namespace" {
			want = append(want, fmt.Sprint(id(o)))
		}
	}
	for _, o := range r {
		// The chart's hooks are its own (checkPrepareUninstall).
		if str(o, "metadata", "annotations", "helm.sh/hook") == "" {
			got = append(got, fmt.Sprint(id(o)))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("objects differ from %s:\n got %v\nwant %v", source, got, want)
	}
	for _, w := range install {
		kind, ns, name := id(w)
		g := r.find(kind, ns, name)
		if g == nil {
			continue
		}
		g, w = deepCopy(t, g), deepCopy(t, w)
		if !subset(mapAt(w, "metadata", "labels"), mapAt(g, "metadata", "labels")) {
			t.Errorf("%s %s: labels %v lack some of %v", kind, name, mapAt(g, "metadata", "labels"), mapAt(w, "metadata", "labels"))
		}
		delete(mapAt(g, "metadata"), "labels")
		delete(mapAt(w, "metadata"), "labels")
		gotContainers, wantContainers := list(g, "spec", "template", "spec", "containers"), list(w, "spec", "template", "spec", "containers")
		for i := range min(len(gotContainers), len(wantContainers)) {
			gc, wc := gotContainers[i].(object), wantContainers[i].(object)
			gotArgs, wantArgs := list(gc, "args"), list(wc, "args")
			if len(gotArgs) < len(wantArgs) || !reflect.DeepEqual(gotArgs[:len(wantArgs)], wantArgs) {
				t.Errorf("%s %s: container %s args %v do not start with %v", kind, name, gc["name"], gotArgs, wantArgs)
			}
			delete(gc, "args")
			delete(wc, "args")
		}
		if diff := firstDiff("", g, w); diff != "" {
			t.Errorf("%s %s differs from %s: %s", kind, name, source, diff)
		}
	}
}

// ensureHelm is the pinned helm's path, built the first time; it skips
// under -short.
func ensureHelm(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds Helm from the Go module proxy the first time (minutes); runs without -short")
	}
	helm, err := harness.EnsureHelm(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return helm
}

func runHelm(t *testing.T, helm string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), helm, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var documentSeparator = regexp.MustCompile(`(?m)^---[ \t]*$`)

func parse(t *testing.T, source string, data []byte) rendering {
	t.Helper()
	var r rendering
	for _, doc := range documentSeparator.Split(string(data), -1) {
		var o object
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("%s: %v\n%s", source, err, doc)
		}
		if o != nil {
			r = append(r, o)
		}
	}
	if len(r) == 0 {
		t.Fatalf("%s: no objects", source)
	}
	return r
}

func id(o object) (kind, namespace, name string) {
	return str(o, "kind"), str(o, "metadata", "namespace"), str(o, "metadata", "name")
}

func (r rendering) all(kind string) []object {
	var out []object
	for _, o := range r {
		if o["kind"] == kind {
			out = append(out, o)
		}
	}
	return out
}

func (r rendering) one(t *testing.T, kind string) object {
	t.Helper()
	all := r.all(kind)
	if len(all) != 1 {
		t.Fatalf("%d objects of kind %s, want 1", len(all), kind)
	}
	return all[0]
}

func (r rendering) find(kind, namespace, name string) object {
	for _, o := range r.all(kind) {
		if k, ns, n := id(o); k == kind && ns == namespace && n == name {
			return o
		}
	}
	return nil
}

func (r rendering) container(t *testing.T, kind, name string) object {
	t.Helper()
	for _, c := range list(r.one(t, kind), "spec", "template", "spec", "containers") {
		if str(c, "name") == name {
			return c.(object)
		}
	}
	t.Fatalf("%s has no container %s", kind, name)
	return nil
}

func (r rendering) webhooks() []object {
	var out []object
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		for _, o := range r.all(kind) {
			for _, w := range list(o, "webhooks") {
				out = append(out, w.(object))
			}
		}
	}
	return out
}

func (r rendering) mustHaveService(t *testing.T, what string, ref object) {
	t.Helper()
	if r.find("Service", str(ref, "namespace"), str(ref, "name")) == nil {
		t.Errorf("%s: Service %s/%s is not installed", what, str(ref, "namespace"), str(ref, "name"))
	}
}

var envReference = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// managerFlags are the manager container's --name=value arguments, with
// $(VAR) references to its env values expanded as the kubelet does.
func managerFlags(c object) map[string]string {
	env := map[string]string{}
	for _, e := range list(c, "env") {
		env[str(e, "name")] = str(e, "value")
	}
	flags := map[string]string{}
	for _, a := range list(c, "args") {
		arg := envReference.ReplaceAllStringFunc(a.(string), func(ref string) string {
			return env[envReference.FindStringSubmatch(ref)[1]]
		})
		if name, value, ok := strings.Cut(arg, "="); ok {
			flags[name] = value
		}
	}
	return flags
}

func at(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(object)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any, keys ...string) string {
	s, _ := at(v, keys...).(string)
	return s
}

func mapAt(v any, keys ...string) object {
	m, _ := at(v, keys...).(object)
	return m
}

func list(v any, keys ...string) []any {
	l, _ := at(v, keys...).([]any)
	return l
}

// subset says whether every key of small has the same value in big.
func subset(small, big object) bool {
	for k, v := range small {
		if big[k] != v {
			return false
		}
	}
	return true
}

func deepCopy(t *testing.T, o object) object {
	t.Helper()
	data, err := yaml.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	var c object
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// firstDiff describes the first place where got and want differ, or "".
func firstDiff(where string, got, want any) string {
	switch w := want.(type) {
	case object:
		g, ok := got.(object)
		if !ok {
			return fmt.Sprintf("%s: %v, want %v", where, got, want)
		}
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		for _, k := range slices.Sorted(maps.Keys(keys)) {
			if d := firstDiff(where+"."+k, g[k], w[k]); d != "" {
				return d
			}
		}
		return ""
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: %v, want %v", where, got, want)
		}
		for i := range w {
			if d := firstDiff(fmt.Sprintf("%s[%d]", where, i), g[i], w[i]); d != "" {
				return d
			}
		}
		return ""
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Sprintf("%s: %v, want %v", where, got, want)
	}
	return ""
}
