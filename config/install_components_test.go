package config

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// ownPriorityComponent writes, in a new folder, a component of a user's
// own that gives the daemon another priority class, and returns the
// folder.
func ownPriorityComponent(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	component := "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\npatches:\n- target: {kind: DaemonSet, name: rejuv-daemon}\n" +
		"  patch: |-\n    - op: replace\n      path: /spec/template/spec/priorityClassName\n      value: node-helpers\n"
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(component), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// checkWithComponents checks an install of config/default for
// registry.example.com/team with the components image-pull-secret and
// critical-priority-quota, socket the runtime's, and priority the
// daemon's priority class.
func checkWithComponents(t *testing.T, r rendering, socket, priority string) {
	t.Helper()
	checkDaemonSocket(t, r, socket)
	checkPullSecrets(t, r, "rejuv-image-pull-secret")
	if n := len(r.all("ResourceQuota")); n != 1 {
		t.Errorf("%d ResourceQuotas, want critical-priority-quota's", n)
	}
	if got := daemonPriority(t, r); got != priority {
		t.Errorf("the daemon's priority class is %q, want %q", got, priority)
	}
	version, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ kind, container, image string }{{"Deployment", "manager", "rejuv-healer"}, {"DaemonSet", "daemon", "rejuv-daemon"}} {
		if got, want := str(r.container(t, c.kind, c.container), "image"), "registry.example.com/team/"+c.image+":"+version; got != want {
			t.Errorf("%s runs %s, want %s", c.kind, got, want)
		}
	}
	checkFields(t, r)
	checkReferences(t, r)
}

// TestMakeDeployAddsTheComponents: make deploy RUNTIME=k3s
// COMPONENTS="..." applies config/default with the runtime's component and
// the others, shipped or of one's own (kubectl stood in for by true, the
// overlay written to a folder of the test's).
func TestMakeDeployAddsTheComponents(t *testing.T) {
	if testing.Short() {
		t.Skip("builds config/render (a minute on a loaded machine); runs without -short")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	dir := t.TempDir()
	cmd := exec.CommandContext(t.Context(), "make", "--no-print-directory", "deploy", "KUBECTL=true", "DEPLOY_DIR="+dir,
		"REGISTRY=registry.example.com/team", "RUNTIME=k3s",
		"COMPONENTS=image-pull-secret critical-priority-quota "+ownPriorityComponent(t))
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make deploy: %v\n%s", err, out)
	}
	checkWithComponents(t, build(t, dir), "/run/k3s/containerd/containerd.sock", "node-helpers")

	cmd = exec.CommandContext(t.Context(), "make", "--no-print-directory", "deploy", "KUBECTL=true", "DEPLOY_DIR="+t.TempDir(), "RUNTIME=podman")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), `runtime "podman": want containerd, cri-dockerd, crio, k3s`) {
		t.Errorf("make deploy RUNTIME=podman: %v\n%s\nwant a refusal naming the runtimes", err, out)
	}
}

// TestInstallFileAddsTheComponents: the single install file for a
// registry (config/render -registry, make install-file) takes the same
// -runtime and -components.
func TestInstallFileAddsTheComponents(t *testing.T) {
	if testing.Short() {
		t.Skip("builds config/render (a minute on a loaded machine); runs without -short")
	}
	file := filepath.Join(t.TempDir(), "install.yaml")
	cmd := exec.CommandContext(t.Context(), "go", "run", "./config/render", "-registry", "registry.example.com/team", "-runtime", "crio",
		"-components", "image-pull-secret,critical-priority-quota", "-o", file)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("config/render: %v\n%s", err, out)
	}
	data := readFile(t, file)
	if !strings.Contains(string(data), "config/components/runtime-crio") {
		t.Errorf("the install file's header does not name its components:\n%s", data[:min(len(data), 400)])
	}
	checkWithComponents(t, parse(t, file, data), "/run/crio/crio.sock", "system-node-critical")
}
