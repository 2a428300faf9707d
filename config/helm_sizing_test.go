package config

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// TestHelmManagerMemorySizedByClusterPods: the manager's memory request
// and limit follow manager.clusterPods unless resources sets them, and a
// clusterPods that is not a whole number of pods is refused by name.
func TestHelmManagerMemorySizedByClusterPods(t *testing.T) {
	helm := ensureHelm(t)
	for _, tt := range []struct {
		sets                   []string
		wantRequest, wantLimit string
	}{
		{nil, "160Mi", "256Mi"},
		{[]string{"manager.clusterPods=0"}, "96Mi", "160Mi"},
		{[]string{"manager.clusterPods=1000"}, "128Mi", "192Mi"},
		{[]string{"manager.clusterPods=50000"}, "352Mi", "576Mi"},
		{[]string{"manager.clusterPods=150000"}, "832Mi", "1344Mi"},
		{[]string{"manager.clusterPods=150000", "manager.resources.limits.memory=3Gi"}, "832Mi", "3Gi"},
		{[]string{"manager.resources.requests.memory=200Mi"}, "200Mi", "256Mi"},
	} {
		t.Run(strings.Join(append([]string{"defaults"}, tt.sets...), ","), func(t *testing.T) {
			args := []string{"template", "rejuv", chartDir, "--namespace", "rejuv-system"}
			for _, s := range tt.sets {
				args = append(args, "--set", s)
			}
			r := parse(t, "helm template", runHelm(t, helm, args...))
			c := r.container(t, "Deployment", "manager")
			if got := str(c, "resources", "requests", "memory"); got != tt.wantRequest {
				t.Errorf("memory request %q, want %q", got, tt.wantRequest)
			}
			if got := str(c, "resources", "limits", "memory"); got != tt.wantLimit {
				t.Errorf("memory limit %q, want %q", got, tt.wantLimit)
			}
			if got := str(c, "resources", "requests", "cpu"); got != "50m" {
				t.Errorf("cpu request %q, want the values' 50m", got)
			}
		})
	}
	for _, bad := range []string{"-1", "1.5", "lots", "null"} {
		t.Run("clusterPods="+bad, func(t *testing.T) {
			var stderr bytes.Buffer
			cmd := exec.CommandContext(t.Context(), helm, "template", "rejuv", chartDir, "--set", "manager.clusterPods="+bad)
			cmd.Stderr = &stderr
			err := cmd.Run()
			if err == nil || !strings.Contains(stderr.String(), "manager.clusterPods: ") || !strings.Contains(stderr.String(), "is not a whole number of pods") {
				t.Errorf("helm template with clusterPods %s: %v, %s; want an error naming manager.clusterPods", bad, err, stderr.String())
			}
		})
	}
}
