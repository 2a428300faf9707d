package podcache

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// heapObjects is the heap held by objects, live or not yet collected.
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// peakHeap samples heapObjects every millisecond until stop is called,
// which returns the highest sample.
func peakHeap() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if h := heapObjects(); h > peak.Load() {
				peak.Store(h)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// TestAStartingManagerNeverHoldsTheWholeListOfFatPods starts the manager's
// cache, as a starting replica does, while 60 Pending pods of 1.15 MB
// each exist (a distinct 250 KB annotation and 900 KB preStop), and
// measures the heap during its first sync: it must stay within a few
// pages of the list (pods.ListPageSize), well below what the list of
// those pods weighs, or enough of them OOM-kill every replica at every
// start however little the cache keeps of each pod.
func TestAStartingManagerNeverHoldsTheWholeListOfFatPods(t *testing.T) {
	const n = 6 * pods.ListPageSize // the list weighs twice the bound below
	ctx := t.Context()
	cfg, admin := apiServer(t)
	if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop"}}); err != nil {
		t.Fatal(err)
	}
	listBytes := 0
	for i := range n {
		pod := hostilePod(i)
		pod.UID, pod.ResourceVersion, pod.OwnerReferences, pod.Spec.NodeName, pod.Status = "", "", nil, "", corev1.PodStatus{}
		if err := admin.Create(ctx, pod); err != nil {
			t.Fatalf("create pod %d: %v", i, err)
		}
		listBytes += pod.Size()
	}

	opts := cache.Options{Scheme: clientgoscheme.Scheme}
	Configure(&opts)
	c, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, &corev1.Pod{}); err != nil {
		t.Fatal(err)
	}
	// As the manager's GOMEMLIMIT does, ask the collector to keep the heap
	// within what the cache may take, so that the peak measures what the
	// cache holds rather than garbage not collected yet.
	runtime.GC()
	before := heapObjects()
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(int64(before) + int64(listBytes)/4))
	stop := peakHeap()
	go func() { _ = c.Start(ctx) }()
	synced := c.WaitForCacheSync(ctx)
	peak := stop()
	if !synced {
		t.Fatal("the cache did not sync")
	}

	var list corev1.PodList
	if err := c.List(ctx, &list, client.InNamespace("shop")); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != n {
		t.Fatalf("premise: the cache holds %d pods, want %d", len(list.Items), n)
	}
	for _, pod := range list.Items {
		if !pods.Trimmed(&pod) {
			t.Fatalf("premise: pod %s was kept whole", pod.Name)
		}
	}
	// A page is decoded from the body read whole: the cache may hold
	// about two pages at once, and the page before them until the
	// collector takes it (the peak reached 3.02 pages on a loaded
	// machine): at most four pages of the six, never the whole list.
	growth := int64(peak) - int64(before)
	bound := int64(4 * pods.ListPageSize * listBytes / n)
	t.Logf("listing %d pods of %d bytes in all, the heap grew by at most %d bytes (%.2f of the list; bound %d, 4 pages of %d pods)",
		n, listBytes, growth, float64(growth)/float64(listBytes), bound, pods.ListPageSize)
	if growth > bound {
		t.Errorf("a starting cache's heap grew by %d bytes while listing %d pods of %d bytes in all, want at most 4 pages of %d pods (%d)",
			growth, n, listBytes, pods.ListPageSize, bound)
	}
}
