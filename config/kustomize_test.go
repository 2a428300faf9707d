package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// build runs kustomize on dir as kubectl apply -k does.
func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	opts := krusty.MakeDefaultOptions()
	opts.Reorder = krusty.ReorderOptionUnspecified
	res, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		raw, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		if err := yaml.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out
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

func find(objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	return nil
}

func ofKind(objs []*unstructured.Unstructured, kind string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// checkKustomizeReferences checks that every name the install refers to is an
// object of the install: the webhooks' and the conversion's Service, the
// manager's flags, its rights on its webhook configurations by name, the
// service accounts of the workloads and bindings.
func checkKustomizeReferences(t *testing.T, objs []*unstructured.Unstructured, prefix, namespace string) {
	t.Helper()
	exists := func(kind, ns, name string) bool {
		o := find(objs, kind, name)
		return o != nil && o.GetNamespace() == ns
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"} {
		for _, c := range ofKind(objs, kind) {
			hooks, _, _ := unstructured.NestedSlice(c.Object, "webhooks")
			for _, h := range hooks {
				svc, _, _ := unstructured.NestedStringMap(h.(map[string]any), "clientConfig", "service")
				if svc["name"] != prefix+"webhook-service" || svc["namespace"] != namespace || !exists("Service", namespace, svc["name"]) {
					t.Errorf("%s %s calls Service %s/%s, which the install does not create", kind, c.GetName(), svc["namespace"], svc["name"])
				}
			}
		}
	}
	crd := find(objs, "CustomResourceDefinition", "containerrecreaterequests.apps.kruise.io")
	conv, _, _ := unstructured.NestedStringMap(crd.Object, "spec", "conversion", "webhook", "clientConfig", "service")
	if !exists("Service", conv["namespace"], conv["name"]) || conv["namespace"] != namespace {
		t.Errorf("the CRD's conversion calls Service %s/%s, which the install does not create", conv["namespace"], conv["name"])
	}
	manager := find(objs, "Deployment", prefix+"healer")
	if manager == nil || manager.GetNamespace() != namespace {
		t.Fatalf("no Deployment %shealer in %s", prefix, namespace)
	}
	containers, _, _ := unstructured.NestedSlice(manager.Object, "spec", "template", "spec", "containers")
	env := map[string]string{}
	for _, e := range containers[0].(map[string]any)["env"].([]any) {
		m := e.(map[string]any)
		if v, ok := m["value"].(string); ok {
			env[m["name"].(string)] = v
		}
	}
	for name, kind := range map[string]string{"WEBHOOK_SERVICE": "Service", "MUTATING_WEBHOOK_CONFIGURATION": "MutatingWebhookConfiguration", "VALIDATING_WEBHOOK_CONFIGURATION": "ValidatingWebhookConfiguration"} {
		if o := find(objs, kind, env[name]); o == nil {
			t.Errorf("the manager's %s=%q names no %s of the install", name, env[name], kind)
		}
	}
	role := find(objs, "ClusterRole", prefix+"healer")
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	for _, r := range rules {
		rule := r.(map[string]any)
		names, _, _ := unstructured.NestedStringSlice(rule, "resourceNames")
		resources, _, _ := unstructured.NestedStringSlice(rule, "resources")
		for _, res := range resources {
			kind := map[string]string{"mutatingwebhookconfigurations": "MutatingWebhookConfiguration", "validatingwebhookconfigurations": "ValidatingWebhookConfiguration", "customresourcedefinitions": "CustomResourceDefinition"}[res]
			for _, n := range names {
				if kind != "" && find(objs, kind, n) == nil {
					t.Errorf("the manager's ClusterRole names %s %s, which the install does not create", kind, n)
				}
			}
		}
	}
	for _, w := range append(ofKind(objs, "Deployment"), ofKind(objs, "DaemonSet")...) {
		sa, _, _ := unstructured.NestedString(w.Object, "spec", "template", "spec", "serviceAccountName")
		if !exists("ServiceAccount", w.GetNamespace(), sa) {
			t.Errorf("%s %s runs as ServiceAccount %s, which the install does not create", w.GetKind(), w.GetName(), sa)
		}
	}
	for _, b := range append(ofKind(objs, "ClusterRoleBinding"), ofKind(objs, "RoleBinding")...) {
		subjects, _, _ := unstructured.NestedSlice(b.Object, "subjects")
		for _, s := range subjects {
			m := s.(map[string]any)
			if m["kind"] == "ServiceAccount" && !exists("ServiceAccount", m["namespace"].(string), m["name"].(string)) {
				t.Errorf("%s %s binds ServiceAccount %s/%s, which the install does not create", b.GetKind(), b.GetName(), m["namespace"], m["name"])
			}
		}
	}
}

func TestDefaultInstallIsComplete(t *testing.T) {
	objs := build(t, "default")
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	for kind, want := range map[string]int{"Namespace": 1, "CustomResourceDefinition": 2, "Deployment": 1, "DaemonSet": 1, "PodDisruptionBudget": 1,
		"Service": 3, "ServiceAccount": 2, "ClusterRole": 5, "ClusterRoleBinding": 2, "Role": 1, "RoleBinding": 1,
		"MutatingWebhookConfiguration": 1, "ValidatingWebhookConfiguration": 1, "ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2} {
		if kinds[kind] != want {
			t.Errorf("config/default has %d %s, want %d (all: %v)", kinds[kind], kind, want, kinds)
		}
	}
	checkKustomizeReferences(t, objs, "rejuv-", "rejuv-system")
	for _, kind := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ClusterRole", "CustomResourceDefinition"} {
		for _, o := range ofKind(objs, kind) {
			if o.GetNamespace() != "" {
				t.Errorf("cluster-scoped %s %s has namespace %q", kind, o.GetName(), o.GetNamespace())
			}
		}
	}
	// The install file is config/default as kubectl apply -k applies it.
	raw, err := os.ReadFile("install.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for doc := range strings.SplitSeq(string(raw), "\n---\n") {
		var o struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatal(err)
		}
		names = append(names, o.Kind+"/"+o.Metadata.Name)
	}
	var want []string
	for _, o := range objs {
		want = append(want, o.GetKind()+"/"+o.GetName())
	}
	if !slices.Equal(names, want) {
		t.Errorf("install.yaml holds %v,\nconfig/default builds %v (run make manifests)", names, want)
	}
}

// TestAnotherPrefixAndNamespaceKeepEveryReference: an overlay of
// config/default that renames everything (a second namePrefix, another
// namespace) leaves no reference pointing at the old names.
func TestAnotherPrefixAndNamespaceKeepEveryReference(t *testing.T) {
	dir := overlay(t, "namespace: ops\nnamePrefix: acme-\nresources:\n- %s\n", "default")
	checkKustomizeReferences(t, build(t, dir), "acme-rejuv-", "ops")
}

func TestMonitoringComponentSelectsTheMetricsServices(t *testing.T) {
	objs := build(t, overlay(t, "resources:\n- %s\ncomponents:\n- %s\n", "default", "components/monitoring"))
	monitors := ofKind(objs, "ServiceMonitor")
	if len(monitors) != 2 {
		t.Fatalf("%d ServiceMonitors, want the manager's and the daemons'", len(monitors))
	}
	for _, m := range monitors {
		sel, _, _ := unstructured.NestedStringMap(m.Object, "spec", "selector", "matchLabels")
		var matched []string
		for _, s := range ofKind(objs, "Service") {
			labels := s.GetLabels()
			all := s.GetNamespace() == m.GetNamespace()
			for k, v := range sel {
				all = all && labels[k] == v
			}
			if all {
				matched = append(matched, s.GetName())
			}
		}
		if len(matched) != 1 || !strings.HasSuffix(matched[0], "-metrics") {
			t.Errorf("ServiceMonitor %s selects Services %v, want its metrics Service", m.GetName(), matched)
		}
		endpoints, _, _ := unstructured.NestedSlice(m.Object, "spec", "endpoints")
		if ep := endpoints[0].(map[string]any); ep["port"] != "metrics" || ep["scheme"] != "https" {
			t.Errorf("ServiceMonitor %s endpoint %v, want port metrics over https", m.GetName(), ep)
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
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			got = append(got, c.(map[string]any)["image"].(string))
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
	objs := build(t, "cert-manager")
	cert := find(objs, "Certificate", "rejuv-serving-cert")
	if cert == nil {
		t.Fatal("no Certificate rejuv-serving-cert")
	}
	dnsNames, _, _ := unstructured.NestedStringSlice(cert.Object, "spec", "dnsNames")
	if want := []string{"rejuv-webhook-service.rejuv-system.svc", "rejuv-webhook-service.rejuv-system.svc.cluster.local"}; !slices.Equal(dnsNames, want) {
		t.Errorf("the Certificate names %v, want %v", dnsNames, want)
	}
	secret, _, _ := unstructured.NestedString(cert.Object, "spec", "secretName")
	issuer, _, _ := unstructured.NestedString(cert.Object, "spec", "issuerRef", "name")
	if find(objs, "Issuer", issuer) == nil {
		t.Errorf("the Certificate's Issuer %s is not installed", issuer)
	}
	manager := find(objs, "Deployment", "rejuv-healer")
	containers, _, _ := unstructured.NestedSlice(manager.Object, "spec", "template", "spec", "containers")
	args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
	if !slices.Contains(args, "--cert-management=external") {
		t.Errorf("manager args %v lack --cert-management=external", args)
	}
	volumes, _, _ := unstructured.NestedSlice(manager.Object, "spec", "template", "spec", "volumes")
	certs := volumes[0].(map[string]any)
	if got, _, _ := unstructured.NestedString(certs, "secret", "secretName"); certs["name"] != "certs" || got != secret || certs["emptyDir"] != nil {
		t.Errorf("manager volume %v, want certs from Secret %s", certs, secret)
	}
	want := cert.GetNamespace() + "/" + cert.GetName()
	for _, o := range []*unstructured.Unstructured{
		find(objs, "MutatingWebhookConfiguration", "rejuv-mutating-webhook-configuration"),
		find(objs, "ValidatingWebhookConfiguration", "rejuv-validating-webhook-configuration"),
		find(objs, "CustomResourceDefinition", "containerrecreaterequests.apps.kruise.io"),
	} {
		if got := o.GetAnnotations()["cert-manager.io/inject-ca-from"]; got != want {
			t.Errorf("%s %s: inject-ca-from %q, want %q", o.GetKind(), o.GetName(), got, want)
		}
		if len(o.GetAnnotations()) < 1 {
			t.Errorf("%s %s lost its annotations", o.GetKind(), o.GetName())
		}
	}
	if crd := find(objs, "CustomResourceDefinition", "containerrecreaterequests.apps.kruise.io"); crd.GetAnnotations()["controller-gen.kubebuilder.io/version"] == "" {
		t.Error("the CRD lost controller-gen's annotation")
	}
}
