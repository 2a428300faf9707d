package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// instances lists a pod's container's instances in the runtime, newest
// first by the kubelet's attempt number.
func instances(t *testing.T, pod *corev1.Pod, container string) []*runtimeapi.Container {
	t.Helper()
	list, err := runtimeOf(t, pod.Spec.NodeName).ListContainers(context.Background(), &runtimeapi.ListContainersRequest{Filter: &runtimeapi.ContainerFilter{
		LabelSelector: map[string]string{"io.kubernetes.pod.uid": string(pod.UID), "io.kubernetes.container.name": container},
	}})
	if err != nil {
		t.Fatal(err)
	}
	out := list.Containers
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Metadata.Attempt > out[i].Metadata.Attempt {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestRequestWhileTheKubeletRestartsTheContainer makes the request while
// the pod's status still shows the container's previous instance, exited,
// and the kubelet has already started the next one, still in its 8 s
// postStart hook: that instance predates the request, so it is the one
// stopped (at once with forceRecreate, once started without), the request
// reports isKilled, and it succeeds only with a third instance, created
// after it: two restarts in all, not one.
func TestRequestWhileTheKubeletRestartsTheContainer(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	for _, force := range []bool{true, false} {
		name := map[bool]string{true: "force", false: "wait"}[force]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			spec := testappPod("restarting")
			// The hook is slow once, when the flag on the pod's volume is set.
			spec.Spec.Volumes = []corev1.Volume{{Name: "flags", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
			app := &spec.Spec.Containers[0]
			app.VolumeMounts = []corev1.VolumeMount{{Name: "flags", MountPath: "/flags"}}
			app.Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{
				Command: []string{"sh", "-c", "if [ -e /flags/slow ]; then rm /flags/slow; sleep 8; fi"},
			}}}
			pod := createPod(t, ns, spec)
			x := containerStatus(pod, "app")
			execIn(t, ns, pod.Name, "app", "touch", "/flags/slow")
			control(t, pod, "exit=1")
			waitPod(t, ns, pod.Name, "showing the exited instance", func(p *corev1.Pod) bool {
				s := containerStatus(p, "app")
				return s.ContainerID == x.ContainerID && s.State.Terminated != nil
			})
			// The premise: the runtime already runs the next instance,
			// which the status does not report.
			var y *runtimeapi.Container
			for deadline := time.Now().Add(20 * time.Second); y == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if all := instances(t, pod, "app"); len(all) > 1 && all[0].State == runtimeapi.ContainerState_CONTAINER_RUNNING {
					y = all[0]
				}
			}
			if y == nil {
				t.Fatal("the kubelet started no next instance within 20 s")
			}
			crr := newRequest(ns, name, pod.Name, "app")
			crr.Spec.ActiveDeadlineSeconds = ptr.To[int64](90)
			crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{ForceRecreate: force}
			if err := c.Create(ctx, crr); err != nil {
				t.Fatal(err)
			}
			requested, err := time.Parse(time.RFC3339Nano, crr.Annotations[v1beta1.RequestedAtAnnotation])
			if err != nil {
				t.Fatal(err)
			}
			if sc := crr.Spec.Containers[0].StatusContext; sc == nil || sc.ContainerID != x.ContainerID {
				t.Fatalf("statusContext %+v: the request was not made while the status showed %s", sc, x.ContainerID)
			}
			if created := time.Unix(0, y.CreatedAt); !created.Before(requested) {
				t.Fatalf("the next instance was created %s after the request; the premise needs it before", created.Sub(requested))
			}
			if cur, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); err != nil || containerStatus(cur, "app").ContainerID != x.ContainerID {
				t.Fatalf("the status reported the next instance before the request was admitted (%v)", err)
			}

			got, _ := waitCompleted(t, c, crr, 90*time.Second)
			state := got.Status.ContainerRecreateStates
			if got.Status.Result != v1beta1.ResultSucceeded || len(state) != 1 || !state[0].IsKilled {
				t.Fatalf("result %q, states %+v; want Succeeded with isKilled", got.Status.Result, state)
			}
			after, err := kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			now := containerStatus(after, "app")
			if restarts := now.RestartCount - x.RestartCount; restarts != 2 || strings.HasSuffix(now.ContainerID, y.Id) {
				t.Errorf("%d restarts, running %s (the instance started before the request: %s); want two, the last after the request", restarts, now.ContainerID, y.Id)
			}
			if started, _ := criTimes(t, now.ContainerID); !started.After(requested) {
				t.Errorf("the running instance started %s before the request", requested.Sub(started))
			}
			if _, finished := criTimes(t, "containerd://"+y.Id); finished.Before(requested) {
				t.Errorf("the instance that predates the request finished before it: it was not the one stopped")
			}
		})
	}
}
