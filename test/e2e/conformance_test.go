package e2e

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// The tests of this file hold Rejuv to OpenKruise's documented behaviour
// of the request, where the rest of the suite does not already (docs/crr.md,
// "Conformance with OpenKruise").

// TestContainersAreStoppedOneByOneInListOrder is OpenKruise's scenario: a
// request lists app, whose preStop hook sleeps 8 s, then side, without
// orderedRecreate; side is stopped only once app's hook has run and app
// has been stopped, not while the hook runs. With a native sidecar the
// kubelet's termination order holds instead of the list's: the sidecar
// listed first is stopped after the app.
func TestContainersAreStoppedOneByOneInListOrder(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	const hook = 8 * time.Second
	cases := []struct {
		name            string
		pod             func() *corev1.Pod
		list            []string
		first, hookless string
	}{
		{"two containers", func() *corev1.Pod { return twoContainerPod("web") }, []string{"app", "side"}, "app", "side"},
		{"a native sidecar listed first", func() *corev1.Pod {
			pod := testappPod("web")
			proxy := *pod.Spec.Containers[0].DeepCopy()
			proxy.Name, proxy.Args, proxy.ReadinessProbe = "proxy", []string{"--listen=:8081"}, nil
			proxy.Ports = []corev1.ContainerPort{{ContainerPort: 8081}}
			proxy.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
			pod.Spec.InitContainers = []corev1.Container{proxy}
			return pod
		}, []string{"proxy", "app"}, "app", "proxy"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			spec := tc.pod()
			for i := range spec.Spec.Containers {
				if spec.Spec.Containers[i].Name == tc.first {
					spec.Spec.Containers[i].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: int64(hook / time.Second)}}}
				}
			}
			spec.Spec.TerminationGracePeriodSeconds = ptr.To[int64](30)
			before := createPod(t, ns, spec)
			crr := newRequest(ns, "in-order", before.Name, tc.list...)
			created := time.Now()
			if err := c.Create(context.Background(), crr); err != nil {
				t.Fatal(err)
			}
			got, _ := waitCompleted(t, c, crr, 90*time.Second)
			if got.Status.Result != v1beta1.ResultSucceeded {
				t.Fatalf("result %q: %+v", got.Status.Result, got.Status.ContainerRecreateStates)
			}
			firstStop := stopIssued(t, ns, before.Name, tc.first)
			_, firstExited := criTimes(t, containerStatus(before, tc.first).ContainerID)
			nextStop := stopIssued(t, ns, before.Name, tc.hookless)
			t.Logf("%s stopped (after its %s hook) %s after the request; %s's old container exited at %s; %s stopped at %s",
				tc.first, hook, firstStop.Sub(created).Round(time.Millisecond), tc.first, firstExited.Sub(created).Round(time.Millisecond),
				tc.hookless, nextStop.Sub(created).Round(time.Millisecond))
			// The premise: the hook ran its 8 s before the first stop.
			if firstStop.Sub(created) < hook {
				t.Fatalf("%s was stopped %s after the request, before its %s preStop hook could have run", tc.first, firstStop.Sub(created), hook)
			}
			if !nextStop.After(firstExited) {
				t.Errorf("%s was stopped %s before %s's old container exited; want one after the other", tc.hookless, firstExited.Sub(nextStop), tc.first)
			}
		})
	}
}

// TestSnapshotIsKeptOnCompletionThroughBothVersions is OpenKruise's v1beta1
// scenario: a completed request, created through v1beta1 or v1alpha1,
// holds the container statuses of its new instances:
// status.containerStatusSnapshot in v1beta1, the annotation
// crr.apps.kruise.io/sync-container-statuses in v1alpha1.
func TestSnapshotIsKeptOnCompletionThroughBothVersions(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	for _, version := range []string{"v1beta1", "v1alpha1"} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			before := createPod(t, ns, testappPod("web"))
			old := containerStatus(before, "app")
			crr := newRequest(ns, "snapshot", before.Name, "app")
			var created client.Object = crr
			if version == "v1alpha1" {
				created = alphaRequest(t, crr)
			}
			if err := c.Create(ctx, created); err != nil {
				t.Fatal(err)
			}
			got, _ := waitCompleted(t, c, crr, 60*time.Second)
			if got.Status.Result != v1beta1.ResultSucceeded {
				t.Fatalf("result %q: %+v", got.Status.Result, got.Status.ContainerRecreateStates)
			}
			// The snapshot is the new instance: another ID, one restart more.
			want := func(what string, s []v1beta1.ContainerRecreateRequestSyncContainerStatus) {
				if len(s) != 1 || s[0].Name != "app" || s[0].ContainerID == old.ContainerID || s[0].ContainerID == "" || s[0].RestartCount != old.RestartCount+1 {
					t.Errorf("%s: %+v; want app's new instance (not %s, restartCount %d)", what, s, old.ContainerID, old.RestartCount+1)
				}
			}
			want("v1beta1 status.containerStatusSnapshot", got.Status.ContainerStatusSnapshot)
			alpha := &v1alpha1.ContainerRecreateRequest{}
			if err := c.Get(ctx, client.ObjectKeyFromObject(crr), alpha); err != nil {
				t.Fatal(err)
			}
			var fromAnnotation []v1beta1.ContainerRecreateRequestSyncContainerStatus
			if err := json.Unmarshal([]byte(alpha.Annotations[v1beta1.SyncContainerStatusesAnnotation]), &fromAnnotation); err != nil {
				t.Fatalf("v1alpha1 annotation %s = %q: %v", v1beta1.SyncContainerStatusesAnnotation, alpha.Annotations[v1beta1.SyncContainerStatusesAnnotation], err)
			}
			want("v1alpha1 annotation "+v1beta1.SyncContainerStatusesAnnotation, fromAnnotation)
		})
	}
}
