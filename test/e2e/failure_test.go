package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// controlledPod runs app and side, each reading a control file on a shared
// emptyDir, so that a test can decide how a new container behaves.
func controlledPod(name string) *corev1.Pod {
	pod := twoContainerPod(name)
	pod.Spec.Volumes = []corev1.Volume{{Name: "ctl", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		c.Args = append(c.Args, "--control-file=/ctl/"+c.Name)
		c.VolumeMounts = []corev1.VolumeMount{{Name: "ctl", MountPath: "/ctl"}}
	}
	return pod
}

// TestFailurePolicyWithAContainerThatNeverBecomesReady makes app's new
// container never ready. With failurePolicy Fail and orderedRecreate, the
// request fails at its deadline and side is never stopped; with Ignore
// (unordered), side is still recreated.
func TestFailurePolicyWithAContainerThatNeverBecomesReady(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	for _, policy := range []v1beta1.ContainerRecreateRequestFailurePolicyType{v1beta1.FailurePolicyFail, v1beta1.FailurePolicyIgnore} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			before := createPod(t, ns, controlledPod("web"))
			execIn(t, ns, before.Name, "side", "sh", "-c", "echo ready=false > /ctl/app")

			crr := newRequest(ns, "never-ready", before.Name, "app", "side")
			crr.Spec.ActiveDeadlineSeconds = ptr.To[int64](8)
			crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{FailurePolicy: policy, OrderedRecreate: policy == v1beta1.FailurePolicyFail}
			if err := c.Create(context.Background(), crr); err != nil {
				t.Fatal(err)
			}
			got, _ := waitCompleted(t, c, crr, 60*time.Second)
			app, side := got.Status.ContainerRecreateStates[0], got.Status.ContainerRecreateStates[1]
			if app.Phase != v1beta1.PhaseFailed || !strings.Contains(app.Message, "activeDeadlineSeconds (8s) passed") {
				t.Errorf("app = %+v, want Failed at the deadline", app)
			}
			// Nothing may be stopped after the deadline: look again a little later.
			time.Sleep(2 * time.Second)
			after, err := kube.CoreV1().Pods(ns).Get(context.Background(), before.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sideRestarts := containerStatus(after, "side").RestartCount - containerStatus(before, "side").RestartCount
			switch policy {
			case v1beta1.FailurePolicyFail:
				if side.Phase != v1beta1.PhaseFailed || sideRestarts != 0 || got.Status.Result != v1beta1.ResultFailed {
					t.Errorf("Fail: side %+v restarted %d times, result %q; want side Failed and never stopped", side, sideRestarts, got.Status.Result)
				}
			case v1beta1.FailurePolicyIgnore:
				if side.Phase != v1beta1.PhaseSucceeded || sideRestarts != 1 || got.Status.Result != v1beta1.ResultPartiallySucceeded {
					t.Errorf("Ignore: side %+v restarted %d times, result %q; want side recreated once", side, sideRestarts, got.Status.Result)
				}
			}
			if appRestarts := containerStatus(after, "app").RestartCount - containerStatus(before, "app").RestartCount; appRestarts != 1 {
				t.Errorf("app restarted %d times, want once", appRestarts)
			}
		})
	}
}
