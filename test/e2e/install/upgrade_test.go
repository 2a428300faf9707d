package install

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/config"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// previousCommit is the commit of this repository that
// TestUpgradeKeepsWorkInFlight upgrades from, cut into a release as make
// release cuts one: the tree as the round of work before the emergency
// stop landed (no rejuv-pause, no pre-delete hook, the manager's older
// rights). Move it forward when a release is tagged.
const previousCommit = "183df7bcbb1eb43d9d5d23dc09d467d7d001bc45"

// previous is the previous release and the tree it was cut from; atExit
// removes the tree.
var previous cutOnce

// previousRelease cuts the release of previousCommit, checked out in a
// git worktree, by that tree's own make release, the first time it is
// asked for.
func previousRelease(t *testing.T) (release, string) {
	t.Helper()
	return previous.get(t, "the previous release", func(t *testing.T) (release, string) {
		root := repositoryRoot(t)
		if out, err := exec.Command("git", "-C", root, "cat-file", "-e", previousCommit+"^{commit}").CombinedOutput(); err != nil {
			t.Fatalf("commit %s, the release the upgrade starts from, is not in this clone (the test needs the repository's history): %v\n%s", previousCommit, err, out)
		}
		dir, err := os.MkdirTemp("", "rejuv-previous-")
		if err != nil {
			t.Fatal(err)
		}
		tree := filepath.Join(dir, "rejuv")
		atExit = append(atExit, func() {
			_ = exec.Command("git", "-C", root, "worktree", "remove", "--force", tree).Run()
			_ = os.RemoveAll(dir)
		})
		runStepsIn(t, root, [][]string{{"git", "worktree", "add", "--detach", tree, previousCommit}})
		chart, err := os.ReadFile(filepath.Join(tree, "config/helm/rejuv/Chart.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		version, err := config.VersionOf(chart)
		if err != nil {
			t.Fatalf("the previous tree: %v", err)
		}
		return cutRelease(t, tree, "previous", version), tree
	})
}

// upgradePath is one install path's install of the previous release, its
// upgrade to this one and its uninstall, as README.md and docs/upgrade.md
// write them.
type upgradePath struct {
	installPrevious, upgrade, uninstall func(t *testing.T)
	// images are those the pods run after the upgrade.
	images deploy.Pushed
	// callersOnly: the admission webhooks answer only the API server.
	callersOnly bool
}

// TestUpgradeKeepsWorkInFlight installs the previous release (cut by make
// release from previousCommit) by each install path, starts work that is
// in flight at once: a rolling restart half done, a request holding its
// pod out of its Service for its unready grace, another queued behind it,
// and a request completed earlier. It then upgrades to this tree's release
// by the same path and checks that nothing was lost or done twice: the
// run completes with each pod recreated once, every request ends as it
// should, no pod stays held, and the stored objects read back as before
// through both API versions. Then it uninstalls by the same path while a
// request holds a pod (kubectl rejuv pause --all --end-requests first, or
// the chart's pre-delete hook): the pod is back in its Service, and the
// cluster holds what it held before the install.
func TestUpgradeKeepsWorkInFlight(t *testing.T) {
	prev, prevRoot := previousRelease(t)
	cur := currentRelease(t)
	usePlugin(t, cur)
	pauseFirst := []string{"kubectl", "rejuv", "pause", "--all", "--end-requests", "--reason", "uninstalling Rejuv", "--timeout", "2m"}
	helmSets := []string{"--namespace", "rejuv-system", "--wait",
		"--set-file", "webhookClientAuth.caBundle=" + cluster.Config.WebhookClientCA(),
		"--set", "webhookClientAuth.names={" + harness.WebhookClientName + "}"}
	paths := map[string]upgradePath{
		"install file": {
			installPrevious: steps([]string{"kubectl", "apply", "--server-side", "-f", prev.url + "install.yaml"}),
			upgrade:         steps([]string{"kubectl", "apply", "--server-side", "-f", cur.url + "install.yaml"}),
			uninstall:       steps(pauseFirst, []string{"kubectl", "delete", "-f", cur.url + "install.yaml", "--ignore-not-found", "--wait"}),
			images:          cur.images,
		},
		"chart": {
			installPrevious: steps(
				[]string{"kubectl", "create", "namespace", "rejuv-system"},
				[]string{"kubectl", "label", "namespace", "rejuv-system", "pod-security.kubernetes.io/enforce=privileged"},
				append([]string{"helm", "install", "rejuv", prev.chart()}, helmSets...)),
			upgrade: steps(append([]string{"helm", "upgrade", "rejuv", cur.chart()}, helmSets...)),
			uninstall: func(t *testing.T) {
				steps([]string{"helm", "uninstall", "rejuv", "--namespace", "rejuv-system", "--wait"})(t)
				// The hook's stop goes with the manager's ServiceAccount:
				// a reinstall into the namespace is not paused.
				gone(t, &corev1.ConfigMap{}, client.ObjectKey{Namespace: deploy.Namespace, Name: v1alpha1.PauseConfigMap})
				steps([]string{"kubectl", "delete", "namespace", "rejuv-system", "--wait"})(t)
			},
			images:      cur.images,
			callersOnly: true,
		},
		"kustomize": {
			installPrevious: func(t *testing.T) {
				runStepsIn(t, prevRoot, [][]string{{"make", "--no-print-directory", "deploy", "REGISTRY=" + prev.images.Registry}})
			},
			upgrade:   steps([]string{"make", "--no-print-directory", "deploy", "REGISTRY=" + pushed.Registry}),
			uninstall: steps(pauseFirst, []string{"make", "--no-print-directory", "undeploy"}),
			images:    pushed,
		},
	}
	for _, name := range []string{"install file", "chart", "kustomize"} {
		t.Run(name, func(t *testing.T) { upgradeWithWorkInFlight(t, paths[name]) })
	}
}

// upgradeWithWorkInFlight is one path of TestUpgradeKeepsWorkInFlight.
func upgradeWithWorkInFlight(t *testing.T, p upgradePath) {
	ctx := context.Background()
	before := snapshotNow(t)
	stack, err := deploy.Attach(cluster)
	if err != nil {
		t.Fatal(err)
	}
	timed(t, "the previous release installed and ready", func() {
		p.installPrevious(t)
		if err := stack.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	})
	var work *inFlight
	timed(t, "work in flight", func() { work = startWorkInFlight(t, stack.Client) })
	timed(t, "upgraded and ready", func() {
		p.upgrade(t)
		if err := stack.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	})
	checkPulled(t, stack, p.images, true)
	if p.callersOnly {
		checkCallersOnly(t, stack)
	}
	timed(t, "the work in flight finished", func() { work.checkFinished(t, stack.Client) })
	var held int32
	timed(t, "a pod held", func() { held = work.holdForUninstall(t, stack.Client) })
	timed(t, "uninstalled", func() { p.uninstall(t) })
	work.checkReleased(t, stack.Client, held)
	work.remove()
	before.check(t, "after the uninstall", nil)
}

// steps runs commands from this tree's root (runSteps).
func steps(commands ...[]string) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		runSteps(t, commands)
	}
}

// timed runs f and logs how long it took.
func timed(t *testing.T, what string, f func()) {
	t.Helper()
	start := time.Now()
	f()
	t.Logf("%s in %s", what, time.Since(start).Round(100*time.Millisecond))
}

// usePlugin puts the release's kubectl-rejuv first on the PATH the steps
// run with, as a user who unpacked it would.
func usePlugin(t *testing.T, r release) {
	t.Helper()
	bin := t.TempDir()
	archive := filepath.Join(r.dir, "kubectl-rejuv_"+r.version+"_linux_"+runtime.GOARCH+".tar.gz")
	if out, err := exec.Command("tar", "-xzf", archive, "-C", bin, "kubectl-rejuv").CombinedOutput(); err != nil {
		t.Fatalf("unpack %s: %v\n%s", archive, err, out)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// gone waits up to 30 seconds for the object to be gone.
func gone(t *testing.T, o client.Object, key client.ObjectKey) {
	t.Helper()
	c, err := deploy.Client(cluster)
	if err != nil {
		t.Fatal(err)
	}
	var last error
	err = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		last = c.Get(ctx, key, o)
		return apierrors.IsNotFound(last), nil
	})
	if err != nil {
		t.Errorf("%T %s is still there 30 s after the uninstall (last read: %v)", o, key, last)
	}
}
