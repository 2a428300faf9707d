package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestForceRecreateStopsAContainerStillStarting uses a container whose
// startup probe cannot pass for 60 s: without forceRecreate the daemon waits
// for it to start (and the deadline ends the request); with it, it is
// stopped at once.
func TestForceRecreateStopsAContainerStillStarting(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	for _, force := range []bool{true, false} {
		name := map[bool]string{true: "force", false: "wait"}[force]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ns := newNamespace(t)
			spec := testappPod("slow")
			app := &spec.Spec.Containers[0]
			app.Args = []string{"--startup-delay=60s"}
			app.ReadinessProbe = nil
			app.StartupProbe = &corev1.Probe{
				ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
				PeriodSeconds: 1, FailureThreshold: 120,
			}
			if _, err := kube.CoreV1().Pods(ns).Create(context.Background(), spec, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			before := waitPod(t, ns, spec.Name, "running but not started", func(p *corev1.Pod) bool {
				s := containerStatus(p, "app")
				return s.State.Running != nil && s.Started != nil && !*s.Started
			})
			crr := newRequest(ns, name, spec.Name, "app")
			crr.Spec.ActiveDeadlineSeconds = ptr.To[int64](8)
			crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{ForceRecreate: force}
			if err := c.Create(context.Background(), crr); err != nil {
				t.Fatal(err)
			}
			if !force {
				err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 5*time.Second, true, func(ctx context.Context) (bool, error) {
					cur := &v1beta1.ContainerRecreateRequest{}
					if err := c.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil || len(cur.Status.ContainerRecreateStates) == 0 {
						return false, nil
					}
					return strings.Contains(cur.Status.ContainerRecreateStates[0].Message, "waiting for the container to finish starting"), nil
				})
				if err != nil {
					t.Errorf("the request does not say it waits for the container to start: %v", err)
				}
			}
			got, _ := waitCompleted(t, c, crr, 60*time.Second)
			after, err := kube.CoreV1().Pods(ns).Get(context.Background(), spec.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			restarts := containerStatus(after, "app").RestartCount - containerStatus(before, "app").RestartCount
			if force && (got.Status.Result != v1beta1.ResultSucceeded || restarts != 1) {
				t.Errorf("force: result %q, %d restarts; want the starting container replaced", got.Status.Result, restarts)
			}
			if !force && (got.Status.Result != v1beta1.ResultFailed || restarts != 0) {
				t.Errorf("wait: result %q, %d restarts; want it left alone until the deadline", got.Status.Result, restarts)
			}
		})
	}
}

// TestUnreadyGraceTakesThePodOutOfServiceFirst opts a namespace into the
// readiness gate: the pod is seen NotReady for the grace before its
// container stops, and Ready again afterwards.
func TestUnreadyGraceTakesThePodOutOfServiceFirst(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := gatedNamespace(t, c)
	before := createPod(t, ns, testappPod("gated"))
	if len(before.Spec.ReadinessGates) != 1 {
		t.Fatalf("readinessGates = %+v, want the injected KruisePodReady", before.Spec.ReadinessGates)
	}
	crr := newRequest(ns, "grace", before.Name, "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](3)}
	if err := c.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	notReady := waitPod(t, ns, before.Name, "NotReady", podReady(false))
	unreadyAt := time.Now()
	if s := containerStatus(notReady, "app"); s.ContainerID != containerStatus(before, "app").ContainerID {
		t.Errorf("the container was replaced before the pod went NotReady")
	}
	got, _ := waitCompleted(t, c, crr, 60*time.Second)
	if got.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("result %q: %+v", got.Status.Result, got.Status.ContainerRecreateStates)
	}
	if _, stopped := criTimes(t, containerStatus(before, "app").ContainerID); stopped.Sub(unreadyAt) < 2*time.Second {
		t.Errorf("the container stopped %s after the pod was seen NotReady, before the 3s grace", stopped.Sub(unreadyAt))
	}
	// What OpenKruise's clients read: v1beta1's PreRecreateGrace condition,
	// and in v1alpha1 the time in crr.apps.kruise.io/unready-acquired.
	grace := meta.FindStatusCondition(got.Status.Conditions, v1beta1.ConditionPreRecreateGrace)
	alpha := &v1alpha1.ContainerRecreateRequest{}
	if err := c.Get(ctx, client.ObjectKeyFromObject(crr), alpha); err != nil {
		t.Fatal(err)
	}
	acquired, err := time.Parse(time.RFC3339, alpha.Annotations[v1beta1.UnreadyAcquiredAnnotation])
	if grace == nil || grace.Status != metav1.ConditionTrue || err != nil || !acquired.Equal(grace.LastTransitionTime.Time) {
		t.Errorf("PreRecreateGrace %+v, v1alpha1 annotation %s %q (%v); want the condition True and its time in the annotation",
			grace, v1beta1.UnreadyAcquiredAnnotation, alpha.Annotations[v1beta1.UnreadyAcquiredAnnotation], err)
	}
	waitPod(t, ns, before.Name, "Ready again", podReady(true))
}
