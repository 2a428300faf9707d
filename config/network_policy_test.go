package config

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/config/installfile"
)

// checkNetworkPolicy: with want set to the API server's addresses, one
// NetworkPolicy selects the manager's pods (and no daemon's), lets those
// addresses alone reach the webhook port, and keeps the metrics and probe
// ports open; its ports are the manager's container ports. With want nil,
// there is none.
func checkNetworkPolicy(t *testing.T, r rendering, want []string) {
	t.Helper()
	policies := r.all("NetworkPolicy")
	if want == nil {
		if len(policies) != 0 {
			t.Errorf("%d NetworkPolicies, want none", len(policies))
		}
		return
	}
	if len(policies) != 1 {
		t.Fatalf("%d NetworkPolicies, want the manager's", len(policies))
	}
	np := policies[0]
	selector := mapAt(np, "spec", "podSelector", "matchLabels")
	var selected []string
	var ports []string
	for _, kind := range []string{"Deployment", "DaemonSet"} {
		for _, w := range r.all(kind) {
			if str(w, "metadata", "namespace") == str(np, "metadata", "namespace") && len(selector) > 0 && subset(selector, mapAt(w, "spec", "template", "metadata", "labels")) {
				selected = append(selected, kind+"/"+str(w, "metadata", "name"))
				for _, p := range list(list(w, "spec", "template", "spec", "containers")[0], "ports") {
					ports = append(ports, str(p, "name"))
				}
			}
		}
	}
	if len(selected) != 1 || !strings.HasPrefix(selected[0], "Deployment/") {
		t.Fatalf("NetworkPolicy selects %v, want the manager's Deployment alone", selected)
	}
	if types := list(np, "spec", "policyTypes"); len(types) != 1 || types[0] != "Ingress" {
		t.Errorf("policyTypes %v, want [Ingress]", types)
	}
	open := map[string][]string{}
	for _, rule := range list(np, "spec", "ingress") {
		var from []string
		for _, peer := range list(rule, "from") {
			from = append(from, str(peer, "ipBlock", "cidr"))
		}
		for _, p := range list(rule, "ports") {
			port := str(p, "port")
			if !slices.Contains(ports, port) {
				t.Errorf("NetworkPolicy opens port %q, which the manager's container does not name (%v)", port, ports)
			}
			open[port] = from
		}
	}
	if got := open["webhook"]; !slices.Equal(got, want) {
		t.Errorf("the webhook port is open to %v, want %v alone", got, want)
	}
	for _, port := range []string{"metrics", "probes"} {
		if from, ok := open[port]; !ok || from != nil {
			t.Errorf("port %s: open %v to %v, want open to all", port, ok, from)
		}
	}
}

// networkPolicyOverlay is an overlay of config/default with
// config/components/network-policy and the rest of body.
func networkPolicyOverlay(t *testing.T, body string) string {
	t.Helper()
	return overlay(t, "resources:\n- %s\ncomponents:\n- %s\n"+body, "default", "components/network-policy")
}

// apiServerConfigMap is the ConfigMap config/components/network-policy
// reads the API server's address from, as its comment has an overlay
// generate it.
const apiServerConfigMap = "configMapGenerator:\n- name: rejuv-network-policy\n  literals: [apiServerCIDR=10.0.0.10/32]\n" +
	"  options:\n    annotations: {config.kubernetes.io/local-config: \"true\"}\n"

// TestNetworkPolicyComponent: config/components/network-policy, added to
// config/default with the API server's address in the ConfigMap its
// comment shows, lets only that address reach the webhooks, and the
// ConfigMap is not installed; a patch adds another address. Without the
// ConfigMap the build fails, naming it, rather than shutting every webhook
// off.
func TestNetworkPolicyComponent(t *testing.T) {
	_, err := installfile.Build(networkPolicyOverlay(t, ""))
	if err == nil || !strings.Contains(err.Error(), "rejuv-network-policy") || !strings.Contains(err.Error(), "apiServerCIDR") {
		t.Errorf("built without the API server's address: %v, want a failure naming the ConfigMap rejuv-network-policy and its apiServerCIDR", err)
	}
	given := build(t, networkPolicyOverlay(t, apiServerConfigMap))
	checkNetworkPolicy(t, given, []string{"10.0.0.10/32"})
	if cm := given.all("ConfigMap"); len(cm) != 0 {
		t.Errorf("%d ConfigMaps installed, want none: the API server's address is kustomize's alone", len(cm))
	}
	checkFields(t, given)
	two := build(t, networkPolicyOverlay(t, apiServerConfigMap+"patches:\n- target: {kind: NetworkPolicy, name: rejuv-healer}\n  patch: |-\n"+
		"    - op: add\n      path: /spec/ingress/0/from/-\n      value: {ipBlock: {cidr: 10.0.0.11/32}}\n"))
	checkNetworkPolicy(t, two, []string{"10.0.0.10/32", "10.0.0.11/32"})
	checkNetworkPolicy(t, build(t, "default"), nil)
}

// TestHelmNetworkPolicyNeedsTheAPIServer: networkPolicy.enabled without the
// API server's addresses fails to render, naming the value, rather than
// shutting the webhooks off.
func TestHelmNetworkPolicyNeedsTheAPIServer(t *testing.T) {
	helm := ensureHelm(t)
	cmd := exec.CommandContext(t.Context(), helm, "template", "rejuv", chartDir, "--set", "networkPolicy.enabled=true")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "networkPolicy.apiServerCIDRs: set the addresses the API server calls the webhooks from") {
		t.Errorf("got %v: %s, want the render refused naming networkPolicy.apiServerCIDRs", err, out)
	}
}
