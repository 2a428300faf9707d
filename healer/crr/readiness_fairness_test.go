package crr

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// slowLists is the API server as a busy cluster's answers a LIST: after
// listLatency. It counts the LISTs.
type slowLists struct {
	client.Reader
	lists atomic.Int64
}

const listLatency = 50 * time.Millisecond

func (r *slowLists) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	r.lists.Add(1)
	time.Sleep(listLatency)
	return r.Reader.List(ctx, list, opts...)
}

// TestAGatedPodIsReadyPromptlyWhileAnotherNamespacesHeldPodsFlap: one
// tenant's pods, held out of service by their requests, change status
// over and over (a flapping readiness probe); another tenant's new pod
// with the readiness gate still gets its condition at once, and the held
// pods stay held. The API server answers a LIST in 50 ms, as a busy one
// does. Only this test's own manager sees the pods (the suite's manager
// leaves out those labelled leaderlessLabel).
func TestAGatedPodIsReadyPromptlyWhileAnotherNamespacesHeldPodsFlap(t *testing.T) {
	needsAPIServer(t)
	ctx := t.Context()
	const heldPods, bound = 40, time.Second
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	own, err := labels.Parse(leaderlessLabel)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		Controller: config.Controller{SkipNameValidation: new(true)},
		Cache:      cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: own}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	reader := &slowLists{Reader: mgr.GetAPIReader()}
	if err := (&PodReadinessReconciler{Client: mgr.GetClient(), Reader: reader}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	go func() { _ = mgr.Start(ctx) }()

	gatedPod := func(ns, name string) *corev1.Pod {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{leaderlessLabel: "true"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img"}},
				ReadinessGates: []corev1.PodReadinessGate{{ConditionType: PodReadyCondition}}},
		}
		if err := admin.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		return pod
	}
	// The churning tenant's pods, each held by a request with an unready
	// grace, as the request controller holds them.
	churn := newNamespace(t)
	held := make([]*corev1.Pod, heldPods)
	for i := range held {
		pod := gatedPod(churn, fmt.Sprintf("held-%d", i))
		waitPodReady(t, pod, corev1.ConditionTrue)
		crr := &v1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: churn, Name: pod.Name, Labels: map[string]string{v1beta1.PodUIDLabel: string(pod.UID), v1beta1.ActiveLabel: "true"}},
			Spec: v1beta1.ContainerRecreateRequestSpec{PodName: pod.Name, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}},
				Strategy: &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(int64(3600))}},
		}
		if err := admin.Create(ctx, crr); err != nil {
			t.Fatal(err)
		}
		if err := admin.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
			t.Fatal(err)
		}
		if err := setPodReady(ctx, admin, pod, corev1.ConditionFalse, reasonRecreating, "containers are being recreated by ContainerRecreateRequest "+crr.Name); err != nil {
			t.Fatal(err)
		}
		held[i] = pod
	}
	// Their status flaps until the test ends.
	flapCtx, stopFlapping := context.WithCancel(ctx)
	var flaps atomic.Int64
	var flapping sync.WaitGroup
	for w := range 4 {
		flapping.Go(func() {
			for n := 0; flapCtx.Err() == nil; n++ {
				pod := held[(w+4*n)%heldPods]
				status := corev1.ConditionTrue
				if n%2 == 1 {
					status = corev1.ConditionFalse
				}
				patch := fmt.Sprintf(`{"status":{"conditions":[{"type":"example.com/flap","status":%q}]}}`, status)
				if admin.Status().Patch(flapCtx, pod, client.RawPatch("application/strategic-merge-patch+json", []byte(patch))) == nil {
					flaps.Add(1)
				}
			}
		})
	}
	defer func() { stopFlapping(); flapping.Wait() }()
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return flaps.Load() >= 3*heldPods, nil
	}); err != nil {
		t.Fatalf("premise: the held pods changed status only %d times", flaps.Load())
	}

	// The other tenant's new gated pods, one after the other.
	other := newNamespace(t)
	listsBefore := reader.lists.Load()
	var slowest time.Duration
	for i := range 3 {
		start := time.Now()
		pod := gatedPod(other, fmt.Sprintf("new-%d", i))
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return podReadyStatus(t, pod) == corev1.ConditionTrue, nil
		})
		if err != nil {
			t.Fatalf("pod %s/%s never got %s=True", other, pod.Name, PodReadyCondition)
		}
		slowest = max(slowest, time.Since(start))
	}
	lists, flapped := reader.lists.Load()-listsBefore, flaps.Load()
	t.Logf("while %d held pods of another namespace changed status %d times: the slowest new gated pod was ready after %s; the controller listed requests from the API server %d times",
		heldPods, flapped, slowest.Round(time.Millisecond), lists)
	if slowest > bound {
		t.Errorf("a new gated pod waited %s for %s=True while another namespace's held pods flapped, want at most %s", slowest.Round(time.Millisecond), PodReadyCondition, bound)
	}
	stopFlapping()
	flapping.Wait()
	for _, pod := range held {
		if s := podReadyStatus(t, pod); s != corev1.ConditionFalse {
			t.Errorf("held pod %s was put back in service (%s=%s) while its request holds it", pod.Name, PodReadyCondition, s)
		}
	}
}
