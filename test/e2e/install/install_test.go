package install

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/admission"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/images"
)

// path is one way to install and uninstall Rejuv, as the README writes it.
type path struct {
	install, uninstall [][]string
	// besideOpenKruise: the install has no daemon and executes no request
	// (config/openkruise).
	besideOpenKruise bool
	// callersOnly: the admission webhooks answer only the API server.
	callersOnly bool
	// images are the images the pods must run; nil is those the tests
	// pushed (pushed).
	images *deploy.Pushed
}

// checkCallersOnly: a review sent to each manager replica without the API
// server's client certificate is refused unread.
func checkCallersOnly(t *testing.T, stack *deploy.Stack) {
	t.Helper()
	pods, err := stack.Pods(context.Background(), deploy.HealerSelector)
	if err != nil || len(pods) == 0 {
		t.Fatalf("the manager's pods: %v (%d)", err, len(pods))
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // the test checks the caller, not the server
	for _, p := range pods {
		resp, err := c.Post("https://"+p.Status.PodIP+":9443"+admission.ValidatePolicyPath, "application/json", strings.NewReader(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"forged"}}`))
		if err != nil {
			t.Fatalf("a review without a client certificate to %s: %v", p.Name, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "answers only the API server") {
			t.Errorf("a review without a client certificate to %s: %d %s, want 403 saying it answers only the API server", p.Name, resp.StatusCode, body)
		}
	}
}

// runSteps runs each command from the repository's root with the cluster's
// kubeconfig and kubectl, as a user following the README would.
func runSteps(t *testing.T, steps [][]string) {
	t.Helper()
	runStepsIn(t, repositoryRoot(t), steps)
}

// repositoryRoot is the root of this repository's tree.
func repositoryRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// runStepsIn is runSteps from the root of another tree.
func runStepsIn(t *testing.T, root string, steps [][]string) {
	t.Helper()
	for _, step := range steps {
		start := time.Now()
		cmd := exec.Command(step[0], step[1:]...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(step, " "), err, out)
		}
		t.Logf("%s: %s", strings.Join(step, " "), time.Since(start).Round(100*time.Millisecond))
	}
}

// installUseUninstall snapshots the cluster's objects, installs Rejuv by
// p, checks that the installed stack recreates a container, uninstalls it
// and checks that the cluster holds exactly the objects it held before.
func installUseUninstall(t *testing.T, p path) {
	t.Helper()
	ctx := context.Background()
	before := snapshotNow(t)
	start := time.Now()
	runSteps(t, p.install)
	stack, err := deploy.Attach(cluster)
	if err != nil {
		t.Fatal(err)
	}
	ready, use := stack.WaitReady, recreateOnce
	if p.besideOpenKruise {
		ready, use = stack.WaitManagerReady, requestForOpenKruise
	}
	if err := ready(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("installed and ready in %s", time.Since(start).Round(100*time.Millisecond))
	images := &pushed
	if p.images != nil {
		images = p.images
	}
	checkPulled(t, stack, *images, !p.besideOpenKruise)
	start = time.Now()
	use(t, stack.Client)
	t.Logf("used in %s", time.Since(start).Round(100*time.Millisecond))
	if p.callersOnly {
		start = time.Now()
		checkCallersOnly(t, stack)
		t.Logf("callers checked in %s", time.Since(start).Round(100*time.Millisecond))
	}

	start = time.Now()
	runSteps(t, p.uninstall)
	t.Logf("uninstalled in %s", time.Since(start).Round(100*time.Millisecond))
	start = time.Now()
	before.check(t, "after the uninstall", nil)
	t.Logf("the cluster as before the install in %s", time.Since(start).Round(100*time.Millisecond))
}

// recreateOnce recreates a testapp container through the installed stack
// and waits for the request to succeed; its namespace is gone afterwards.
func recreateOnce(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	pod, done := readyPod(t, c)
	defer done()
	ns := pod.Namespace
	before := pod.Status.ContainerStatuses[0]
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "once"},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: "web", Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
	}
	if err := c.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(crr), crr); err != nil {
			return false, err
		}
		return crr.Status.Phase == v1beta1.PhaseCompleted, nil
	})
	if err != nil || crr.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("request %s/once: %v, status %+v", ns, err, crr.Status)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	if now := pod.Status.ContainerStatuses[0]; now.RestartCount != before.RestartCount+1 || now.ContainerID == before.ContainerID {
		t.Errorf("restartCount %d -> %d, ID %s -> %s: want one recreation", before.RestartCount, now.RestartCount, before.ContainerID, now.ContainerID)
	}
}

// readyPod runs a ready testapp pod, web, labelled app=web, in a new
// namespace; done deletes the namespace and waits until it is gone.
func readyPod(t *testing.T, c client.Client) (pod *corev1.Pod, done func()) {
	t.Helper()
	ctx := context.Background()
	ns, done := testNamespace(t, c, "install-", nil)
	pod = &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{"app": "web"}},
		Spec:       testappSpec(),
	}
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			return false, err
		}
		return len(pod.Status.ContainerStatuses) == 1 && pod.Status.ContainerStatuses[0].Ready, nil
	})
	if err != nil {
		t.Fatalf("pod %s/web not ready: %v", ns, err)
	}
	return pod, done
}

// testNamespace creates a namespace named from prefix, with labels, and
// waits for its default ServiceAccount; remove, which the test's clean-up
// also runs, deletes it and waits until it is gone.
func testNamespace(t *testing.T, c client.Client, prefix string, labels map[string]string) (name string, remove func()) {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix, Labels: labels}}
	if err := c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	remove = func() {
		_ = c.Delete(context.Background(), ns)
		_ = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			return c.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{}) != nil, nil
		})
	}
	t.Cleanup(remove)
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Get(ctx, client.ObjectKey{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{}) == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s has no default ServiceAccount: %v", ns.Name, err)
	}
	return ns.Name, remove
}

// testappSpec is a pod of one testapp container, app, ready once it
// answers /readyz.
func testappSpec() corev1.PodSpec {
	return corev1.PodSpec{
		TerminationGracePeriodSeconds: new(int64(2)),
		Containers: []corev1.Container{{
			Name: "app", Image: images.TestApp.Ref(),
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 1},
		}},
	}
}

// checkPulled: every container of the manager's (and the daemon's) pods
// runs the image pushed to the cluster's registry (see runsPushed).
func checkPulled(t *testing.T, stack *deploy.Stack, pushed deploy.Pushed, daemon bool) {
	t.Helper()
	runsPushed(t, stack, deploy.HealerSelector, pushed.Healer)
	if daemon {
		runsPushed(t, stack, deploy.DaemonSelector, pushed.Daemon)
	}
}

// pushedUnder are Rejuv's images in registry, by the digests its tags
// for version point at.
func pushedUnder(t *testing.T, registry, version string) deploy.Pushed {
	t.Helper()
	p := deploy.Pushed{Registry: registry}
	for _, img := range []struct {
		name string
		ref  *string
	}{{"rejuv-healer", &p.Healer}, {"rejuv-daemon", &p.Daemon}} {
		tag, err := name.NewTag(registry + "/" + img.name + ":" + version)
		if err != nil {
			t.Fatal(err)
		}
		desc, err := remote.Head(tag)
		if err != nil {
			t.Fatalf("%s in the registry: %v", tag, err)
		}
		*img.ref = tag.Context().Digest(desc.Digest.String()).String()
	}
	return p
}

// runsPushed: every container of the pods selector selects runs ref
// (REGISTRY/REPOSITORY@DIGEST), pulled from the cluster's registry: its
// image ID is that digest in a repository of the registry. containerd
// names an image by the first reference it pulled it as, so the same image
// pushed under two repositories (the quick start's and a release's, built
// from one commit) reports the first.
func runsPushed(t *testing.T, stack *deploy.Stack, selector, ref string) {
	t.Helper()
	_, digest, ok := strings.Cut(ref, "@")
	if !ok {
		t.Fatalf("%s is not by digest", ref)
	}
	pods, err := stack.Pods(context.Background(), selector)
	if err != nil || len(pods) == 0 {
		t.Fatalf("pods %s: %v (%d)", selector, err, len(pods))
	}
	for _, p := range pods {
		for _, c := range p.Status.ContainerStatuses {
			if !strings.HasPrefix(c.ImageID, cluster.Config.Registry()+"/") || !strings.HasSuffix(c.ImageID, "@"+digest) {
				t.Errorf("pod %s container %s runs %s (image ID %s), want %s pulled from the cluster's registry", p.Name, c.Name, c.Image, c.ImageID, ref)
			}
		}
	}
}

// TestInstallWithTheSingleFile: the single file written for the registry
// (make install-file REGISTRY=...), applied with kubectl.
func TestInstallWithTheSingleFile(t *testing.T) {
	installUseUninstall(t, path{
		install: [][]string{
			{"make", "--no-print-directory", "install-file", "REGISTRY=" + pushed.Registry},
			{"kubectl", "apply", "--server-side", "-f", "bin/install.yaml"},
		},
		uninstall: [][]string{{"kubectl", "delete", "-f", "bin/install.yaml", "--ignore-not-found", "--wait"}},
	})
}

// TestInstallWithHelm: the chart with a helm built from its Go module,
// its images from the registry (image.*.repository), into a namespace
// labelled for the privileged Pod Security level as README.md says, which
// the uninstall removes after the release; its admission webhooks answer only the API server's webhook
// client certificate (webhookClientAuth), which the harness's API server
// presents.
func TestInstallWithHelm(t *testing.T) {
	installUseUninstall(t, helmPath("config/helm/rejuv",
		"--set", "image.healer.repository="+pushed.Registry+"/rejuv-healer",
		"--set", "image.daemon.repository="+pushed.Registry+"/rejuv-daemon"))
}

// helmPath installs chart with helm into rejuv-system, labelled for the
// privileged Pod Security level as README.md says, with args and its
// admission webhooks answering only the API server's webhook client
// certificate (webhookClientAuth), which the harness's API server
// presents; the uninstall removes the namespace after the release.
func helmPath(chart string, args ...string) path {
	install := append([]string{"helm", "install", "rejuv", chart, "--namespace", "rejuv-system", "--wait",
		"--set-file", "webhookClientAuth.caBundle=" + cluster.Config.WebhookClientCA(),
		"--set", "webhookClientAuth.names={" + harness.WebhookClientName + "}"}, args...)
	return path{
		install: [][]string{
			{"kubectl", "create", "namespace", "rejuv-system"},
			{"kubectl", "label", "namespace", "rejuv-system", "pod-security.kubernetes.io/enforce=privileged"},
			install,
		},
		callersOnly: true,
		uninstall: [][]string{
			{"helm", "uninstall", "rejuv", "--namespace", "rejuv-system", "--wait"},
			{"kubectl", "delete", "namespace", "rejuv-system", "--wait"},
		},
	}
}

// TestHelmRefusesANamespaceThatForbidsTheDaemon: an install into a
// namespace that enforces the baseline Pod Security level, which forbids
// the daemon's host directory, stops before anything is installed and says
// how to label it.
func TestHelmRefusesANamespaceThatForbidsTheDaemon(t *testing.T) {
	ns := "rejuv-baseline"
	runSteps(t, [][]string{
		{"kubectl", "create", "namespace", ns},
		{"kubectl", "label", "namespace", ns, "pod-security.kubernetes.io/enforce=baseline"},
	})
	defer runSteps(t, [][]string{{"kubectl", "delete", "namespace", ns, "--wait"}})
	cmd := exec.Command("helm", "install", "rejuv", "config/helm/rejuv", "--namespace", ns, "--dry-run=server")
	cmd.Dir = "../../.."
	cmd.Env = append(os.Environ(), "KUBECONFIG="+cluster.Kubeconfig())
	out, err := cmd.CombinedOutput()
	want := "namespace " + ns + " enforces the baseline Pod Security level, and the daemon mounts the runtime's socket from the host, which only privileged allows: kubectl label namespace " + ns + " pod-security.kubernetes.io/enforce=privileged --overwrite"
	if err == nil || !strings.Contains(string(out), want) {
		t.Errorf("helm install into a baseline namespace: %v\n%s\nwant a refusal saying %q", err, out, want)
	}
}
