package installfile

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestComponentsByName: a runtime names its component (containerd none),
// a name a folder of config/components, anything else a folder of one's
// own; what is neither, an unknown runtime and two runtimes are refused,
// naming the choices.
func TestComponentsByName(t *testing.T) {
	own := t.TempDir()
	if err := os.WriteFile(filepath.Join(own, "kustomization.yaml"), []byte("kind: Component\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		runtime, names string
		want           []string
		err            string
	}{
		{"", "", nil, ""},
		{"containerd", "", nil, ""},
		{"k3s", "monitoring, image-pull-secret " + own, []string{"../components/runtime-k3s", "../components/monitoring", "../components/image-pull-secret", own}, ""},
		{"", "runtime-crio", []string{"../components/runtime-crio"}, ""},
		{"podman", "", nil, `runtime "podman": want containerd, cri-dockerd, crio, k3s`},
		{"", "grafana", nil, `component "grafana": neither one of cert-manager, `},
		{"crio", "runtime-k3s", nil, "more than one runtime's"},
	} {
		got, err := Components("..", tt.runtime, tt.names)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("Components(%q, %q) = %v, %v; want an error containing %q", tt.runtime, tt.names, got, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Components(%q, %q) = %v, %v; want %v", tt.runtime, tt.names, got, err, tt.want)
		}
	}
}

// TestOverlayNamesItsPartsFromItsFolder: an overlay written anywhere names
// config/default and its components by relative paths (kustomize refuses
// absolute ones) and builds.
func TestOverlayNamesItsPartsFromItsFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "deploy")
	components, err := Components("..", "crio", "")
	if err != nil {
		t.Fatal(err)
	}
	overrides, err := InRegistry("registry.example.com/team", nil)
	if err != nil {
		t.Fatal(err)
	}
	o := Overlay{Base: "../default", Components: components, Images: overrides}
	if err := o.Write(dir); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(written), "- /") {
		t.Errorf("the overlay names a part by an absolute path:\n%s", written)
	}
	out, err := Build(dir)
	if err != nil {
		t.Fatalf("%v\n%s", err, written)
	}
	for _, want := range []string{"image: registry.example.com/team/rejuv-daemon:", "--cri-socket=/host/run/crio/crio.sock"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the overlay's build lacks %q", want)
		}
	}
}
