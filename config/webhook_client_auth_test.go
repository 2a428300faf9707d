package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// checkWebhookClientAuth: with configMap set, the manager verifies the API
// server's webhook client certificate with the CA in that ConfigMap of its
// namespace (mounted read-only where --webhook-client-ca reads it), and
// accepts names alone when set; with configMap empty, it does not ask.
func checkWebhookClientAuth(t *testing.T, r rendering, configMap string, names []string) {
	t.Helper()
	manager := r.container(t, "Deployment", "manager")
	flags := managerFlags(manager)
	ca, asks := flags["--webhook-client-ca"]
	if configMap == "" {
		if asks {
			t.Errorf("the manager asks for a webhook client certificate (--webhook-client-ca=%s), want it not to", ca)
		}
		return
	}
	if !asks {
		t.Fatalf("the manager has no --webhook-client-ca")
	}
	if got := flags["--webhook-client-names"]; got != strings.Join(names, ",") {
		t.Errorf("--webhook-client-names=%q, want %q", got, strings.Join(names, ","))
	}
	var volume string
	for _, m := range list(manager, "volumeMounts") {
		if strings.HasPrefix(ca, str(m, "mountPath")+"/") {
			volume = str(m, "name")
			if at(m, "readOnly") != true {
				t.Errorf("volume %s is mounted writable, want read-only", volume)
			}
		}
	}
	deployment := r.one(t, "Deployment")
	var source string
	for _, v := range list(deployment, "spec", "template", "spec", "volumes") {
		if str(v, "name") == volume {
			source = str(v, "configMap", "name")
		}
	}
	if volume == "" || source != configMap {
		t.Errorf("--webhook-client-ca=%s is in volume %q of ConfigMap %q, want ConfigMap %s", ca, volume, source, configMap)
	}
}

// TestWebhookClientAuthComponent: config/components/webhook-client-auth
// has the manager verify callers with the ConfigMap rejuv-webhook-client-ca
// the user creates; config/default does not ask callers for anything.
func TestWebhookClientAuthComponent(t *testing.T) {
	r := build(t, overlay(t, "resources:\n- %s\ncomponents:\n- %s\n", "default", "components/webhook-client-auth"))
	checkWebhookClientAuth(t, r, "rejuv-webhook-client-ca", nil)
	checkWebhookClientAuth(t, build(t, "default"), "", nil)
}

// TestHelmWebhookClientAuth: webhookClientAuth.caBundle installs the CA in
// a ConfigMap of the release that the manager verifies callers with, with
// webhookClientAuth.names; unset, the manager does not ask callers.
func TestHelmWebhookClientAuth(t *testing.T) {
	helm := ensureHelm(t)
	const bundle = "-----BEGIN CERTIFICATE-----\nMIIBdTCCARugAwIBAgIQ\n-----END CERTIFICATE-----\n"
	file := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(file, []byte(bundle), 0o600); err != nil {
		t.Fatal(err)
	}
	sets := []string{"--set-file", "webhookClientAuth.caBundle=" + file, "--set", "webhookClientAuth.names={kube-apiserver-webhook-client,backup}"}
	runHelm(t, helm, append([]string{"lint", "--strict", chartDir, "--namespace", "ops"}, sets...)...)
	r := parse(t, "helm template", runHelm(t, helm, append([]string{"template", "acme", chartDir, "--namespace", "ops"}, sets...)...))
	checkFields(t, r)
	checkNames(t, r, "acme-rejuv-", "ops")
	checkWebhookClientAuth(t, r, "acme-rejuv-webhook-client-ca", []string{"kube-apiserver-webhook-client", "backup"})
	cm := r.find("ConfigMap", "ops", "acme-rejuv-webhook-client-ca")
	if got := str(cm, "data", "ca.crt"); got != bundle {
		t.Errorf("ConfigMap acme-rejuv-webhook-client-ca holds %q, want the bundle %q", got, bundle)
	}
	plain := parse(t, "helm template", runHelm(t, helm, "template", "acme", chartDir, "--namespace", "ops"))
	checkWebhookClientAuth(t, plain, "", nil)
	if slices.ContainsFunc(plain.all("ConfigMap"), func(o object) bool { return strings.HasSuffix(str(o, "metadata", "name"), "webhook-client-ca") }) {
		t.Errorf("a webhook client CA ConfigMap without webhookClientAuth.caBundle")
	}
}
