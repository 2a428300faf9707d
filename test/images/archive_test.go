package images

import (
	"archive/tar"
	"encoding/json"
	"errors"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestArchiveHoldsAnIndexOfEveryPlatform builds a program for two
// platforms and reads the archive as each loader does: the OCI layout's
// index.json naming one index of both platforms (ctr, kind), and
// docker-save's manifest.json naming the host's image (docker load).
func TestArchiveHoldsAnIndexOfEveryPlatform(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program for two platforms")
	}
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	img := Image{Name: "pause", Package: Pause.Package, Repository: "example.com/rejuv/pause", Tag: "v9.9.9", User: "65532:65532",
		Labels: map[string]string{"org.opencontainers.image.version": "v9.9.9"}}
	platforms := []v1.Platform{{OS: "linux", Architecture: other}, HostPlatform()}
	a, err := BuildFor(t.Context(), img, platforms, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Platforms) != 2 {
		t.Fatalf("archive reports %d platforms, want 2", len(a.Platforms))
	}
	for _, p := range a.Platforms {
		if p.Compressed <= 0 || p.Unpacked <= p.Compressed/2 {
			t.Errorf("%s: sizes %d compressed, %d unpacked", p.Platform, p.Compressed, p.Unpacked)
		}
	}
	files := archiveFiles(t, a.Path)

	var layout struct{ ImageLayoutVersion string }
	mustJSON(t, files["oci-layout"], &layout)
	if layout.ImageLayoutVersion != "1.0.0" {
		t.Errorf("oci-layout = %+v", layout)
	}
	var top v1.IndexManifest
	mustJSON(t, files["index.json"], &top)
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != types.OCIImageIndex {
		t.Fatalf("index.json = %+v, want one image index", top)
	}
	if got := top.Manifests[0].Annotations["io.containerd.image.name"]; got != "example.com/rejuv/pause:v9.9.9" {
		t.Errorf("containerd image name %q", got)
	}
	var index v1.IndexManifest
	mustJSON(t, files[blobPath(top.Manifests[0].Digest)], &index)
	var archs []string
	for _, m := range index.Manifests {
		archs = append(archs, m.Platform.OS+"/"+m.Platform.Architecture)
		var manifest v1.Manifest
		mustJSON(t, files[blobPath(m.Digest)], &manifest)
		var cfg v1.ConfigFile
		mustJSON(t, files[blobPath(manifest.Config.Digest)], &cfg)
		if cfg.Architecture != m.Platform.Architecture || cfg.Config.User != "65532:65532" || cfg.Config.Labels["org.opencontainers.image.version"] != "v9.9.9" {
			t.Errorf("%s: config %s user %q labels %v", archs[len(archs)-1], cfg.Architecture, cfg.Config.User, cfg.Config.Labels)
		}
		for _, l := range manifest.Layers {
			if _, ok := files[blobPath(l.Digest)]; !ok {
				t.Errorf("layer %s of %s is not in the archive", l.Digest, m.Platform)
			}
		}
	}
	if want := []string{"linux/" + other, "linux/" + runtime.GOARCH}; !slices.Equal(archs, want) {
		t.Errorf("index platforms %v, want %v", archs, want)
	}

	tag, err := name.NewTag("example.com/rejuv/pause:v9.9.9")
	if err != nil {
		t.Fatal(err)
	}
	host, err := tarball.ImageFromPath(a.Path, &tag)
	if err != nil {
		t.Fatalf("read the archive as docker load does: %v", err)
	}
	cfg, err := host.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Architecture != runtime.GOARCH {
		t.Errorf("manifest.json names the %s image, want the host's %s", cfg.Architecture, runtime.GOARCH)
	}
}

func archiveFiles(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if files[h.Name], err = io.ReadAll(tr); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func mustJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
}
