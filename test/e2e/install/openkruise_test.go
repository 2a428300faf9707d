package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// kruiseCRD is OpenKruise's request CRD, generated from its API module; it
// stands in for OpenKruise, whose controller and daemon the harness cannot
// build (their modules are not on the module proxy).
const kruiseCRD = "test/openkruise/crd/apps.kruise.io_containerrecreaterequests.yaml"

// TestInstallBesideOpenKruise: with OpenKruise's request CRD installed,
// config/openkruise installs a manager whose policy creates a v1alpha1
// request with the shipped service account's rights, which nothing of
// Rejuv's admits or executes, and follows it once OpenKruise completes it;
// the uninstall leaves nothing behind.
func TestInstallBesideOpenKruise(t *testing.T) {
	overlay := registryOverlay(t, "config/openkruise")
	installUseUninstall(t, path{
		install: [][]string{
			{"kubectl", "apply", "--server-side", "-f", kruiseCRD},
			{"kubectl", "wait", "--for=condition=Established", "-f", kruiseCRD},
			{"kubectl", "apply", "--server-side", "-k", overlay},
		},
		uninstall: [][]string{
			{"kubectl", "delete", "-k", overlay, "--ignore-not-found", "--wait"},
			{"kubectl", "delete", "-f", kruiseCRD, "--ignore-not-found", "--wait"},
		},
		besideOpenKruise: true,
	})
}

// TestInstallWithHelmBesideOpenKruise: the chart with
// crrExecutor=openkruise installs the same manager as config/openkruise,
// into a namespace that enforces the restricted Pod Security level, as the
// manager alone may run.
func TestInstallWithHelmBesideOpenKruise(t *testing.T) {
	installUseUninstall(t, path{
		install: [][]string{
			{"kubectl", "apply", "--server-side", "-f", kruiseCRD},
			{"kubectl", "wait", "--for=condition=Established", "-f", kruiseCRD},
			{"kubectl", "create", "namespace", "rejuv-system"},
			{"kubectl", "label", "namespace", "rejuv-system", "pod-security.kubernetes.io/enforce=restricted"},
			{"helm", "install", "rejuv", "config/helm/rejuv", "--namespace", "rejuv-system", "--wait",
				"--set", "crrExecutor=openkruise",
				"--set", "image.healer.repository=" + pushed.Registry + "/rejuv-healer"},
		},
		uninstall: [][]string{
			{"helm", "uninstall", "rejuv", "--namespace", "rejuv-system", "--wait"},
			{"kubectl", "delete", "namespace", "rejuv-system", "--wait"},
			{"kubectl", "delete", "-f", kruiseCRD, "--ignore-not-found", "--wait"},
		},
		besideOpenKruise: true,
	})
}

// registryOverlay writes the overlay README.md gives for installing base
// (a folder of config/) from a registry: base's objects, with an images:
// override that renames Rejuv's images into the cluster's registry.
func registryOverlay(t *testing.T, base string) string {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(dir, filepath.Join(root, base))
	if err != nil {
		t.Fatal(err)
	}
	k := fmt.Sprintf(`resources:
- %[1]s
images:
- name: rejuv-healer
  newName: %[2]s/rejuv-healer
- name: rejuv-daemon
  newName: %[2]s/rejuv-daemon
`, rel, pushed.Registry)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// requestForOpenKruise has a policy ask for a recreation and plays
// OpenKruise's part.
func requestForOpenKruise(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	for _, o := range []client.Object{
		&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}, ObjectMeta: metav1.ObjectMeta{Namespace: deploy.Namespace, Name: deploy.DaemonSet}},
		&metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"}, ObjectMeta: metav1.ObjectMeta{Name: "rejuv-mutating-webhook-configuration"}},
	} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(o), o); !apierrors.IsNotFound(err) {
			t.Errorf("%s %s is installed beside OpenKruise (%v)", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err)
		}
	}

	pod, done := readyPod(t, c)
	defer done()
	policy := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: "on-request"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Rules: []v1alpha1.Rule{{Name: "always", Rego: `package install
import rego.v1

recreate contains {"container": "app", "reason": "asked for by the install test"} if { true }
`}},
		},
	}
	if err := c.Create(ctx, policy); err != nil {
		t.Fatalf("create RecreatePolicy %s/%s: %v", policy.Namespace, policy.Name, err)
	}

	// The manager creates the request in v1alpha1, the one version served.
	var crr appsv1alpha1.ContainerRecreateRequest
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		list := &appsv1alpha1.ContainerRecreateRequestList{}
		if err := c.List(ctx, list, client.InNamespace(pod.Namespace), client.MatchingLabels{v1beta1.PolicyLabel: policy.Name}); err != nil {
			return false, err
		}
		if len(list.Items) > 0 {
			crr = list.Items[0]
		}
		return len(list.Items) > 0, nil
	})
	if err != nil {
		t.Fatalf("no request of policy %s: %v\n%+v", policy.Name, err, readPolicy(t, c, policy).Status)
	}
	if crr.Spec.PodName != pod.Name || len(crr.Spec.Containers) != 1 || crr.Spec.Containers[0].Name != "app" {
		t.Errorf("request %s: spec %+v, want container app of pod %s", crr.Name, crr.Spec, pod.Name)
	}

	// Nothing of Rejuv's takes it up: no status, the container untouched.
	time.Sleep(3 * time.Second)
	if err := c.Get(ctx, client.ObjectKeyFromObject(&crr), &crr); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
		t.Fatal(err)
	}
	if crr.Status.Phase != "" || pod.Status.ContainerStatuses[0].RestartCount != 0 {
		t.Errorf("beside OpenKruise, Rejuv executed request %s: status %+v, restarts %d", crr.Name, crr.Status, pod.Status.ContainerStatuses[0].RestartCount)
	}

	// OpenKruise completes it: the policy sees the recreation done, with
	// no second request while its cooldown lasts.
	crr.Status = appsv1alpha1.ContainerRecreateRequestStatus{
		Phase: appsv1alpha1.PhaseCompleted, CompletionTime: &metav1.Time{Time: time.Now()},
		ContainerRecreateStates: []appsv1alpha1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: appsv1alpha1.PhaseSucceeded}},
	}
	if err := c.Status().Update(ctx, &crr); err != nil {
		t.Fatalf("complete request %s as OpenKruise: %v", crr.Name, err)
	}
	var decision *v1alpha1.Decision
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		p := readPolicy(t, c, policy)
		for i := range p.Status.RecentDecisions {
			if d := p.Status.RecentDecisions[i]; d.Pod == pod.Name && d.Outcome == v1alpha1.OutcomeCreated {
				decision = &d
			}
		}
		return decision != nil && p.Status.ActiveRecreations == 0, nil
	})
	if err != nil {
		t.Errorf("policy %s after OpenKruise completed %s: %v\n%+v", policy.Name, crr.Name, err, readPolicy(t, c, policy).Status)
	}
	if decision != nil && decision.Request != crr.Name {
		t.Errorf("the policy's decision names request %s, want %s", decision.Request, crr.Name)
	}
	list := &appsv1alpha1.ContainerRecreateRequestList{}
	if err := c.List(ctx, list, client.InNamespace(pod.Namespace)); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Errorf("%d requests, want the one the policy made (cooldown)", len(list.Items))
	}
}

func readPolicy(t *testing.T, c client.Client, p *v1alpha1.RecreatePolicy) *v1alpha1.RecreatePolicy {
	t.Helper()
	out := &v1alpha1.RecreatePolicy{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(p), out); err != nil {
		t.Fatal(err)
	}
	return out
}
