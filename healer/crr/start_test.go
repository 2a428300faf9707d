package crr

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestAStartDoesNotMapEveryPod: a request controller that starts (a new
// leader taking over) finds every pod cached already; it does not map
// each of them to its requests, which at 10,000 pods held its start back
// by seconds (every request is enqueued at the start anyway). A pod
// created afterwards is still mapped to its requests.
func TestAStartDoesNotMapEveryPod(t *testing.T) {
	needsAPIServer(t)
	ctx := t.Context()
	ns := newNamespace(t)
	const cached = 20
	before := map[types.UID]bool{}
	for i := range cached {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("web-%d", i)},
			Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "app", Image: "img"}}},
		}
		if err := admin.Create(ctx, pod); err != nil {
			t.Fatal(err)
		}
		before[pod.UID] = true
		if i == 0 {
			createCRR(t, pod, "first", nil, nil)
		}
	}

	// A second manager, of this namespace only, beside the suite's.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: admin.Scheme(), Metrics: metricsserver.Options{BindAddress: "0"}, HealthProbeBindAddress: "0",
		Cache:      cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller: config.Controller{SkipNameValidation: new(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	lists := &podRequestLists{Client: mgr.GetClient(), of: map[types.UID]int{}}
	r := &Reconciler{Client: lists, Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("test"),
		NodeLostGrace: testNodeLostGrace, PickupTimeout: testPickupTimeout}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	stop, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- mgr.Start(stop) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})

	// The controller's workers start once its watches were given every
	// pod cached: its first request read shows the start is over.
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return lists.requestsRead.Load() > 0, nil
	}); err != nil {
		t.Fatal("the controller did not read the request of a cached pod after its start")
	}
	late := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "late"},
		Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "app", Image: "img"}}},
	}
	if err := admin.Create(ctx, late); err != nil {
		t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return lists.count(late.UID) > 0, nil
	}); err != nil {
		t.Fatal("a pod created after the start was not mapped to its requests")
	}
	mapped := 0
	for uid := range before {
		mapped += lists.count(uid)
	}
	if mapped != 0 {
		t.Errorf("at the start %d of the %d cached pods were mapped to their requests, want none", mapped, cached)
	}
}

// podRequestLists counts, for each pod UID, the lists of that pod's
// requests read through it, and the requests read.
type podRequestLists struct {
	client.Client
	requestsRead atomic.Int32
	mu           sync.Mutex
	of           map[types.UID]int
}

func (c *podRequestLists) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, ok := obj.(*v1beta1.ContainerRecreateRequest); ok {
		c.requestsRead.Add(1)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *podRequestLists) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*v1beta1.ContainerRecreateRequestList); ok {
		o := (&client.ListOptions{}).ApplyOptions(opts)
		if o.LabelSelector != nil {
			if uid, found := o.LabelSelector.RequiresExactMatch(v1beta1.PodUIDLabel); found {
				c.mu.Lock()
				c.of[types.UID(strings.TrimSpace(uid))]++
				c.mu.Unlock()
			}
		}
	}
	return c.Client.List(ctx, list, opts...)
}

func (c *podRequestLists) count(uid types.UID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.of[uid]
}
