package config

import (
	"fmt"
	"testing"
)

// checkPullSecrets: every pod template of r (the manager's, the daemon's)
// pulls its images with the Secrets want, and with none when want is nil.
func checkPullSecrets(t *testing.T, r rendering, want ...string) {
	t.Helper()
	for _, kind := range []string{"Deployment", "DaemonSet"} {
		for _, w := range r.all(kind) {
			var got []string
			for _, s := range list(w, "spec", "template", "spec", "imagePullSecrets") {
				got = append(got, str(s, "name"))
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s %s pulls with Secrets %v, want %v", kind, str(w, "metadata", "name"), got, want)
			}
		}
	}
}

// TestImagePullSecretComponent: config/components/image-pull-secret has
// the manager and the daemon pull Rejuv's images with the Secret
// rejuv-image-pull-secret, beside config/default and config/openkruise
// (no daemon); the rename its comment shows names another Secret, and
// config/default names none.
func TestImagePullSecretComponent(t *testing.T) {
	checkPullSecrets(t, build(t, "default"))
	withSecret := build(t, overlay(t, "resources:\n- %s\ncomponents:\n- %s\n", "default", "components/image-pull-secret"))
	checkPullSecrets(t, withSecret, "rejuv-image-pull-secret")
	checkFields(t, withSecret)
	if n := len(withSecret.all("DaemonSet")) + len(withSecret.all("Deployment")); n != 2 {
		t.Errorf("%d workloads, want the manager's and the daemon's", n)
	}
	checkPullSecrets(t, build(t, overlay(t, "resources:\n- %s\ncomponents:\n- %s\n", "openkruise", "components/image-pull-secret")), "rejuv-image-pull-secret")
	renamed := build(t, overlay(t, "resources:\n- %s\ncomponents:\n- %s\npatches:\n"+
		"- target: {kind: Deployment|DaemonSet, labelSelector: app.kubernetes.io/part-of=rejuv}\n  patch: |-\n"+
		"    - op: replace\n      path: /spec/template/spec/imagePullSecrets/0/name\n      value: regcred\n", "default", "components/image-pull-secret"))
	checkPullSecrets(t, renamed, "regcred")
}
