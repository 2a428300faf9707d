package install

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/config"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// quickstartRegistry is the registry docs/quickstart.md names, for the
// reader to replace by theirs.
const quickstartRegistry = "registry.example.com/team"

var shBlock = regexp.MustCompile("(?ms)^```sh\n(.*?)^```$")

// TestQuickStart runs every sh block of docs/quickstart.md, in order, from
// the repository's root, as a new user would on a cluster with
// metrics-server and a registry: the page's placeholder registry is the
// cluster's, and IMAGE_PLATFORMS the node's platform alone (make images
// builds arm64 too otherwise). It is also the test of make deploy
// REGISTRY=... and make undeploy: Rejuv's pods must run the images pulled
// from the registry. The blocks wait for what they show (a schedule's run,
// requests completed, the leak healed), and the leak's request must be
// Completed, so a page gone stale fails here; afterwards the cluster holds
// what it held before.
func TestQuickStart(t *testing.T) {
	ctx := context.Background()
	page, err := os.ReadFile("../../../docs/quickstart.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlock.FindAllStringSubmatch(string(page), -1)
	if len(blocks) < 8 || !strings.Contains(string(page), quickstartRegistry) {
		t.Fatalf("docs/quickstart.md has %d sh blocks and names %s: %t; want the install, the examples and the clean-up", len(blocks), quickstartRegistry, strings.Contains(string(page), quickstartRegistry))
	}
	c, err := deploy.Client(cluster)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := deploy.InstallMetricsServer(ctx, cluster, c)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := ms.Uninstall(ctx); err != nil {
			t.Errorf("remove metrics-server: %v", err)
		}
	}()
	before := snapshotNow(t)

	registry := cluster.Config.Registry() + "/quickstart"
	forgetImages(t, registry)
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	// The install block alone, then a look at what it installed, then the
	// rest, with the plugin the install block built on PATH (as its export
	// left it).
	install := runBlocks(t, root, blocks[:1], 1, registry, os.Getenv("PATH"))
	checkPulledFrom(t, registry)
	out := install + runBlocks(t, root, blocks[1:], 2, registry, filepath.Join(root, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	// What the page says to look at: the leak's request, completed.
	_, healed, ok := strings.Cut(out, "== the leak healed")
	if !ok {
		t.Fatalf("docs/quickstart.md has no block that waits for the leak to be healed:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^heal-leaky-\S+\s+Completed\s`).MatchString(healed) {
		t.Errorf("after the leak's wait, kubectl get containerrecreaterequests shows no completed request of heal-leaky:\n%s", healed)
	}

	// The resource metrics API lists what runs at the moment.
	notMetrics := func(key string) bool { return !strings.Contains(key, "metrics.k8s.io") }
	before.check(t, "after the quick start's clean-up", notMetrics)
}

// runBlocks runs blocks (numbered from first) as one bash script from
// root, with the page's registry replaced, and returns their output, each
// block's preceded by a mark; the block that follows a heading "The leak
// healed" is marked so.
func runBlocks(t *testing.T, root string, blocks [][]string, first int, registry, path string) string {
	t.Helper()
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for i, b := range blocks {
		name := fmt.Sprintf("block %d", first+i)
		if strings.Contains(b[1], "app=leaky --for=jsonpath") {
			name = "the leak healed"
		}
		fmt.Fprintf(&script, "echo \"== %s at $(date +%%s.%%N)\"\n%s", name, strings.ReplaceAll(b[1], quickstartRegistry, registry))
	}
	script.WriteString("echo \"== end at $(date +%s.%N)\"\n")
	cmd := exec.Command("bash", "-c", script.String())
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig(), "IMAGE_PLATFORMS=linux/"+runtime.GOARCH, "PATH="+path)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("docs/quickstart.md's blocks %d to %d: %s", first, first+len(blocks)-1, time.Since(start).Round(time.Second))
	logBlockTimes(t, string(out))
	if err != nil {
		t.Fatalf("docs/quickstart.md, run as written: %v\n%s", err, out)
	}
	return string(out)
}

// forgetImages removes from the nodes the images the quick start pushes to
// registry, as a new user's node has never pulled them: the node's image
// store outlives the cluster, and a copy of an earlier run under the same
// tag would be run instead of what make images pushes now.
func forgetImages(t *testing.T, registry string) {
	t.Helper()
	version, err := config.Version()
	if err != nil {
		t.Fatal(err)
	}
	for _, repo := range []string{"rejuv-healer", "rejuv-daemon", "rejuv-demo"} {
		ref := registry + "/" + repo + ":" + version
		for _, n := range cluster.Nodes() {
			cmd := exec.Command(cluster.Config.Tools.Ctr, "--address", n.CRISocket, "--namespace", "k8s.io", "images", "rm", ref)
			if out, err := cmd.CombinedOutput(); err != nil && !strings.Contains(string(out), "not found") {
				t.Fatalf("ctr images rm %s on %s: %v\n%s", ref, n.Name, err, out)
			}
		}
	}
}

// checkPulledFrom: every container of Rejuv's pods runs the image make
// images pushed to registry under Rejuv's version, pulled from there.
func checkPulledFrom(t *testing.T, registry string) {
	t.Helper()
	version, err := config.Version()
	if err != nil {
		t.Fatal(err)
	}
	stack, err := deploy.Attach(cluster)
	if err != nil {
		t.Fatal(err)
	}
	checkPulled(t, stack, pushedUnder(t, registry, version), true)
}

// logBlockTimes logs how long each block took, from the script's marks.
func logBlockTimes(t *testing.T, out string) {
	t.Helper()
	mark := regexp.MustCompile(`(?m)^== (.+) at (\d+\.\d+)$`)
	var last string
	var lastAt float64
	for _, m := range mark.FindAllStringSubmatch(out, -1) {
		at, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		if last != "" {
			t.Logf("  %s: %.1fs", last, at-lastAt)
		}
		last, lastAt = m[1], at
	}
}
