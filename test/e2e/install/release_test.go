package install

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rejuv-dev/rejuv/config"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// TestInstallARelease cuts a release as make release does, for the node's
// platform, into a folder served over http as a forge serves a release's
// files, with its images pushed to the cluster's registry; checks its
// checksums and what it holds; and installs the plugin as its notes say,
// with krew from the released manifest, in krew's own layout, and runs
// its backtest against a backfilled Prometheus (backtestWithThePlugin). Its install
// file and chart are installed by URL in TestUpgradeKeepsWorkInFlight, as
// the upgrade from the previous release, and every pod must run the
// images the release pinned, pulled from the registry. On the newest
// Kubernetes these are the single file's and the chart's install paths;
// the compatibility run installs from the source tree instead
// (TestInstallWithTheSingleFile, TestInstallWithHelm).
func TestInstallARelease(t *testing.T) {
	r := currentRelease(t)
	checkReleaseFiles(t, r.dir, r.version)
	checkSBOM(t, filepath.Join(r.dir, "kubectl-rejuv_linux_"+runtime.GOARCH+".spdx.json"), filepath.Join(r.dir, "kubectl-rejuv_"+r.version+"_linux_"+runtime.GOARCH+".tar.gz"))
	t.Run("plugin with krew", func(t *testing.T) {
		installPluginWithKrew(t, r.url, r.version)
		if !t.Failed() {
			backtestWithThePlugin(t)
		}
	})
}

// release is a release cut by make release for the node's platform and
// served over http as a forge serves a release's files.
type release struct {
	version string
	// dir holds its files; url is where they are served, ending in /.
	dir, url string
	// images are its images, by the digests its files pin.
	images deploy.Pushed
}

// chart is the URL of the release's chart.
func (r release) chart() string {
	return r.url + "rejuv-" + strings.TrimPrefix(r.version, "v") + ".tgz"
}

// releases serves the files of the releases the tests cut, each under
// /NAME/VERSION/; TestMain starts and stops it.
var releases struct {
	root string
	srv  *httptest.Server
}

// serveReleases starts the server releases are cut for; the function it
// returns stops it and removes their files.
func serveReleases() (stop func(), err error) {
	releases.root, err = os.MkdirTemp("", "rejuv-releases-")
	if err != nil {
		return nil, err
	}
	releases.srv = httptest.NewServer(http.FileServer(http.Dir(releases.root)))
	return func() {
		releases.srv.Close()
		_ = os.RemoveAll(releases.root)
	}, nil
}

// cutRelease runs make release in the tree root for the node's platform,
// its images pushed under the cluster's registry at /NAME, its files
// served at /NAME/VERSION/.
func cutRelease(t *testing.T, root, name, version string) release {
	t.Helper()
	r := release{version: version, dir: filepath.Join(releases.root, name, version), url: releases.srv.URL + "/" + name + "/" + version + "/"}
	registry := cluster.Config.Registry() + "/" + name
	platform := "linux/" + runtime.GOARCH
	runStepsIn(t, root, [][]string{{"make", "--no-print-directory", "release", "VERSION=" + version, "REGISTRY=" + registry,
		"RELEASE_DIR=" + r.dir, "RELEASE_URL=" + releases.srv.URL + "/" + name, "RELEASE_IMAGE_PLATFORMS=" + platform, "RELEASE_PLUGIN_PLATFORMS=" + platform}})
	r.images = releasedImages(t, r.dir, registry, version)
	return r
}

// cutOnce is a release cut by the first test that asks for it, from the
// tree at root, for every test that asks after.
type cutOnce struct {
	once sync.Once
	r    release
	root string
	ok   bool
}

// get cuts the release with cut the first time, and returns it and its
// tree; what is the release's name in a failure.
func (o *cutOnce) get(t *testing.T, what string, cut func(t *testing.T) (release, string)) (release, string) {
	t.Helper()
	o.once.Do(func() {
		o.r, o.root = cut(t)
		o.ok = !t.Failed()
	})
	if !o.ok {
		t.Fatalf("%s could not be cut (see the first test that cut it)", what)
	}
	return o.r, o.root
}

// current is this tree's release.
var current cutOnce

// currentRelease is this tree's release, cut by the first test that asks.
func currentRelease(t *testing.T) release {
	t.Helper()
	r, _ := current.get(t, "this tree's release", func(t *testing.T) (release, string) {
		version, err := config.Version()
		if err != nil {
			t.Fatal(err)
		}
		root := repositoryRoot(t)
		return cutRelease(t, root, "current", version), root
	})
	return r
}

// checkReleaseFiles: the release holds every file docs/releasing.md lists,
// and SHA256SUMS, which sha256sum -c accepts, lists every other one.
func checkReleaseFiles(t *testing.T, dir, version string) {
	t.Helper()
	arch := runtime.GOARCH
	want := []string{
		"RELEASE_NOTES.md", "SHA256SUMS", "install-openkruise.yaml", "install.yaml",
		"kubectl-rejuv_" + version + "_linux_" + arch + ".tar.gz", "kubectl-rejuv_linux_" + arch + ".spdx.json",
		"rejuv-" + strings.TrimPrefix(version, "v") + ".tgz",
		"rejuv-daemon.tar", "rejuv-daemon_linux_" + arch + ".spdx.json",
		"rejuv-demo.tar", "rejuv-demo_linux_" + arch + ".spdx.json",
		"rejuv-healer.tar", "rejuv-healer_linux_" + arch + ".spdx.json",
		"rejuv.yaml",
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("the release holds %v, want %v", got, want)
	}
	cmd := exec.Command("sha256sum", "--check", "--strict", "SHA256SUMS")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sha256sum --check SHA256SUMS: %v\n%s", err, out)
	}
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range want {
		if f != "SHA256SUMS" && !strings.Contains(string(sums), "  "+f+"\n") {
			t.Errorf("SHA256SUMS does not list %s", f)
		}
	}
}

var pinned = regexp.MustCompile(`(?m)^\s+image: (\S+)$`)

// releasedImages reads the images the released install file names, each
// of which must be pinned by the digest the registry serves under the
// release's tag, and the same in the OpenKruise variant.
func releasedImages(t *testing.T, dir, registry, version string) deploy.Pushed {
	t.Helper()
	p := pushedUnder(t, registry, version)
	for file, want := range map[string][]string{"install.yaml": {p.Healer, p.Daemon}, "install-openkruise.yaml": {p.Healer}} {
		data, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range pinned.FindAllStringSubmatch(string(data), -1) {
			got = append(got, m[1])
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s names images %v, want %v (pinned by the digests pushed as %s)", file, got, want, version)
		}
	}
	return p
}

// checkSBOM: the SPDX document of a released binary describes it (by its
// SHA-256) and lists the modules linked into it.
func checkSBOM(t *testing.T, sbom, archive string) {
	t.Helper()
	data, err := os.ReadFile(sbom)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SPDXVersion string `json:"spdxVersion"`
		Packages    []struct {
			Name      string `json:"name"`
			Checksums []struct {
				Value string `json:"checksumValue"`
			} `json:"checksums"`
		} `json:"packages"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", sbom, err)
	}
	bin := filepath.Join(t.TempDir(), "kubectl-rejuv")
	if out, err := exec.Command("tar", "-xzf", archive, "-C", filepath.Dir(bin), "kubectl-rejuv").CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", archive, err, out)
	}
	out, err := exec.Command("sha256sum", bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	sum, _, _ := strings.Cut(string(out), " ")
	var names []string
	for _, p := range doc.Packages {
		names = append(names, p.Name)
	}
	if doc.SPDXVersion != "SPDX-2.3" || len(doc.Packages) == 0 || doc.Packages[0].Name != "kubectl-rejuv" ||
		len(doc.Packages[0].Checksums) != 1 || doc.Packages[0].Checksums[0].Value != sum {
		t.Errorf("%s does not describe kubectl-rejuv (sha256 %s): %s", sbom, sum, data[:min(len(data), 600)])
	}
	for _, dep := range []string{"stdlib", "k8s.io/client-go", "github.com/spf13/cobra"} {
		if !slices.Contains(names, dep) {
			t.Errorf("%s lists no %s among %d packages", sbom, dep, len(names))
		}
	}
}

// installPluginWithKrew installs the plugin as the release notes say, with
// krew (as kubectl krew) from the released manifest's URL, and runs it.
func installPluginWithKrew(t *testing.T, url, version string) {
	krew, err := harness.EnsureKrew(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tools := t.TempDir()
	if err := os.Symlink(krew, filepath.Join(tools, "kubectl-krew")); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(t.TempDir(), "krew")
	t.Setenv("KREW_ROOT", root)
	t.Setenv("KREW_NO_UPGRADE_CHECK", "1")
	t.Setenv("PATH", filepath.Join(root, "bin")+string(os.PathListSeparator)+tools+string(os.PathListSeparator)+os.Getenv("PATH"))
	// --no-update-index: a detached manifest needs no index, and this
	// machine cannot clone krew's.
	runSteps(t, [][]string{{"kubectl", "krew", "install", "--manifest-url=" + url + "rejuv.yaml", "--no-update-index"}})
	store := filepath.Join(root, "store", "rejuv", version, "kubectl-rejuv")
	if _, err := os.Stat(store); err != nil {
		t.Errorf("krew's store has no %s: %v", store, err)
	}
	if target, err := os.Readlink(filepath.Join(root, "bin", "kubectl-rejuv")); err != nil || target != store {
		t.Errorf("krew's bin/kubectl-rejuv links to %q (%v), want %s", target, err, store)
	}
	out, err := exec.Command("kubectl", "rejuv", "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), version) {
		t.Errorf("kubectl rejuv --version: %v\n%s\nwant %s", err, out, version)
	}
}
