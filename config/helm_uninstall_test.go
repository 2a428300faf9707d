package config

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// checkPrepareUninstall: with Rejuv executing requests, the chart's
// pre-delete hook runs the manager's image as rejuv-healer
// prepare-uninstall for the manager's ServiceAccount, under an identity of
// its own that is a hook too (deleted once it succeeds) and may do no
// more than the command does; beside OpenKruise there is none.
func checkPrepareUninstall(t *testing.T, r rendering, prefix, namespace string, want bool) {
	t.Helper()
	name := prefix + "prepare-uninstall"
	var hooks []string
	for _, o := range r {
		if hook := str(o, "metadata", "annotations", "helm.sh/hook"); hook != "" {
			kind, _, n := id(o)
			hooks = append(hooks, kind+"/"+n)
			if hook != "pre-delete" || str(o, "metadata", "annotations", "helm.sh/hook-delete-policy") != "before-hook-creation,hook-succeeded" {
				t.Errorf("%s %s: hook %q, delete policy %q; want pre-delete, deleted before it is created again and once it succeeds",
					kind, n, hook, str(o, "metadata", "annotations", "helm.sh/hook-delete-policy"))
			}
		}
	}
	slices.Sort(hooks)
	wantHooks := []string{"ClusterRole/" + name, "ClusterRoleBinding/" + name, "Job/" + name, "Role/" + name, "RoleBinding/" + name, "ServiceAccount/" + name}
	if !want {
		wantHooks = nil
	}
	if !slices.Equal(hooks, wantHooks) {
		t.Fatalf("hooks %v, want %v", hooks, wantHooks)
	}
	if !want {
		return
	}
	job := r.find("Job", namespace, name)
	pod := mapAt(job, "spec", "template", "spec")
	if str(pod, "serviceAccountName") != name || str(pod, "restartPolicy") != "Never" {
		t.Errorf("the hook's pod runs as %q, restartPolicy %q; want %s, Never", str(pod, "serviceAccountName"), str(pod, "restartPolicy"), name)
	}
	containers := list(pod, "containers")
	manager := r.container(t, "Deployment", "manager")
	managerSA := str(r.one(t, "Deployment"), "spec", "template", "spec", "serviceAccountName")
	if len(containers) != 1 {
		t.Fatalf("the hook has %d containers, want 1", len(containers))
	}
	c := containers[0].(map[string]any)
	if str(c, "image") != str(manager, "image") {
		t.Errorf("the hook runs %s, want the manager's image %s", str(c, "image"), str(manager, "image"))
	}
	args := strs(c, "args")
	for _, a := range []string{"prepare-uninstall", "--namespace=" + namespace, "--service-account=" + managerSA, "--timeout=2m"} {
		if !slices.Contains(args, a) {
			t.Errorf("the hook's args %v lack %s", args, a)
		}
	}
	rules := func(kind, ns string) string {
		var b strings.Builder
		for _, rule := range list(r.find(kind, ns, name), "rules") {
			b.WriteString(strings.Join([]string{strings.Join(strs(rule, "apiGroups"), ","),
				strings.Join(strs(rule, "resources"), ","), strings.Join(strs(rule, "resourceNames"), ","), strings.Join(strs(rule, "verbs"), ",")}, " ") + "; ")
		}
		return b.String()
	}
	if got, want := rules("Role", namespace), " configmaps  create;  configmaps rejuv-pause get,update;  serviceaccounts "+managerSA+" get; "; got != want {
		t.Errorf("the hook's Role grants %q, want %q", got, want)
	}
	if got, want := rules("ClusterRole", ""), "apps.kruise.io containerrecreaterequests  list;  pods  list; "; got != want {
		t.Errorf("the hook's ClusterRole grants %q, want %q", got, want)
	}
}

// strs is the list at keys as strings.
func strs(v any, keys ...string) []string {
	var out []string
	for _, e := range list(v, keys...) {
		out = append(out, e.(string))
	}
	return out
}

// TestHelmRefusesABadUninstallTimeout: uninstall.timeout must be a
// duration such as 2m; another value stops the install, naming it.
func TestHelmRefusesABadUninstallTimeout(t *testing.T) {
	helm := ensureHelm(t)
	for _, v := range []string{"5", "0s", "two minutes"} {
		out, err := exec.CommandContext(t.Context(), helm, "template", "rejuv", chartDir, "--set", "uninstall.timeout="+v).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "uninstall.timeout: ") {
			t.Errorf("uninstall.timeout=%s: %v\n%s", v, err, out)
		}
	}
}
