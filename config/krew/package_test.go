package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestKrewPackage packages the plugin for this machine's platform and
// installs it as krew does: the manifest follows krew's rules (its name is
// its file's, a v-prefixed semantic version, a selector, the archive's
// checksum, the files it names are in the archive and the bin among
// them); the binary installed answers --version with the release's
// version, and kubectl's completion helper completes through it.
func TestKrewPackage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin (run without -short)")
	}
	out := t.TempDir()
	if err := run(options{version: "v1.2.3", commit: "abc123", out: out, urlBase: "https://example.invalid/releases", platforms: [][2]string{{runtime.GOOS, runtime.GOARCH}}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "rejuv.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.UnmarshalStrict(b, &m); err != nil {
		t.Fatal(err)
	}
	switch {
	case m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin":
		t.Errorf("apiVersion %s kind %s", m.APIVersion, m.Kind)
	case m.Metadata.Name != "rejuv":
		t.Errorf("name %q, want rejuv, as the file is rejuv.yaml", m.Metadata.Name)
	case !semver.MatchString(m.Spec.Version) || m.Spec.Version != "v1.2.3":
		t.Errorf("version %q", m.Spec.Version)
	case m.Spec.ShortDescription == "" || len(m.Spec.ShortDescription) > 70 || m.Spec.Description == "" || m.Spec.Homepage == "":
		t.Errorf("descriptions %q / %q, homepage %q", m.Spec.ShortDescription, m.Spec.Description, m.Spec.Homepage)
	case len(m.Spec.Platforms) != 1:
		t.Fatalf("%d platforms, want 1", len(m.Spec.Platforms))
	}
	p := m.Spec.Platforms[0]
	name := "kubectl-rejuv_v1.2.3_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	if p.Selector.MatchLabels["os"] != runtime.GOOS || p.Selector.MatchLabels["arch"] != runtime.GOARCH || p.URI != "https://example.invalid/releases/v1.2.3/"+name {
		t.Errorf("platform selector %v uri %s", p.Selector.MatchLabels, p.URI)
	}
	archiveBytes, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(archiveBytes); hex.EncodeToString(sum[:]) != p.Sha256 {
		t.Errorf("sha256 %s is not the archive's", p.Sha256)
	}

	// Install as krew does: extract, place each file of files, link bin.
	installed := t.TempDir()
	files := extract(t, filepath.Join(out, name), t.TempDir())
	var placed []string
	for _, f := range p.Files {
		src, ok := files[f.From]
		if !ok {
			t.Fatalf("files: %s is not in the archive", f.From)
		}
		dst := filepath.Join(installed, f.To, filepath.Base(f.From))
		if err := os.Rename(src, dst); err != nil {
			t.Fatal(err)
		}
		placed = append(placed, filepath.Base(f.From))
	}
	if !slices.Contains(placed, p.Bin) {
		t.Fatalf("bin %s is not among the files placed %v", p.Bin, placed)
	}
	version, err := exec.Command(filepath.Join(installed, p.Bin), "--version").Output()
	if err != nil || !strings.Contains(string(version), "kubectl-rejuv version v1.2.3 (commit abc123") {
		t.Errorf("--version: %q, %v", version, err)
	}
	complete := exec.Command(filepath.Join(installed, "kubectl_complete-rejuv"), "rules", "memory")
	complete.Env = append(os.Environ(), "PATH="+installed+string(os.PathListSeparator)+os.Getenv("PATH"))
	got, err := complete.Output()
	if err != nil || !strings.Contains(string(got), "memory-leak\nmemory-near-limit\n") {
		t.Errorf("kubectl_complete-rejuv rules memory: %q, %v", got, err)
	}
}

// TestKrewRefusesABadVersion: krew wants a v-prefixed semantic version.
func TestKrewRefusesABadVersion(t *testing.T) {
	for _, v := range []string{"", "1.2.3", "v1.2", "latest"} {
		if err := run(options{version: v, out: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "-version") {
			t.Errorf("version %q: %v, want refused", v, err)
		}
	}
}

// extract writes the archive's files into dir, by name.
func extract(t *testing.T, path, dir string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	files := map[string]string{}
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, h.Name)
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, os.FileMode(h.Mode))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, tr); err != nil {
			t.Fatal(err)
		}
		out.Close()
		files[h.Name] = dst
	}
}
