package healer

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// hostilePod is a Pending pod as anyone who may create pods can make it:
// a distinct 250 KB annotation and a distinct 900 KB preStop command,
// 1.15 MB in all, within the API server's limits.
func hostilePod(i int) *corev1.Pod {
	pod := templatePod(fmt.Sprintf("fat-%d", i), map[string]string{"app": "fat"})
	pod.Annotations = map[string]string{"example.com/blob": fmt.Sprintf("%d", i) + strings.Repeat("a", 250_000)}
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sh", "-c", fmt.Sprintf("%d", i) + strings.Repeat("b", 900_000)}},
	}}
	return pod
}

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestTheCacheKeepsAFewKilobytesOfAPodWhateverItsAnnotationsAndPreStop
// puts pods with distinct large annotations and preStop commands through
// the manager's pod transform, as the cache does for every pod of the
// cluster, and measures what stays on the heap per pod: a pod of 1.15 MB
// must cost the manager a few kilobytes, not its size.
func TestTheCacheKeepsAFewKilobytesOfAPodWhateverItsAnnotationsAndPreStop(t *testing.T) {
	const n = 40
	var transform toolscache.TransformFunc
	for obj, by := range cacheOptions("rejuv-system").ByObject {
		if _, ok := obj.(*corev1.Pod); ok {
			transform = by.Transform
		}
	}
	if transform == nil {
		t.Fatal("premise: the manager's cache has no transform for pods")
	}
	kept := make([]*corev1.Pod, 0, n)
	before := heapInUse()
	for i := range n {
		obj, err := transform(hostilePod(i))
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, obj.(*corev1.Pod))
	}
	perPod := (int64(heapInUse()) - int64(before)) / n
	t.Logf("the cache keeps %d bytes per pod of %d bytes", perPod, hostilePod(0).Size())
	if perPod > 64<<10 {
		t.Errorf("the cache keeps %d bytes per pod with a distinct 250 KB annotation and 900 KB preStop, want at most %d", perPod, 64<<10)
	}
	for i, pod := range kept {
		if pod.Name != fmt.Sprintf("fat-%d", i) || pod.Spec.Containers[0].Name != "app" || pod.Labels["app"] != "fat" {
			t.Errorf("pod %d lost what Rejuv reads: %+v", i, pod.ObjectMeta)
		}
		if note := pod.Annotations[pods.TrimmedAnnotation]; !strings.Contains(note, "example.com/blob") || !strings.Contains(note, "containers: app") {
			t.Errorf("pod %d: %s is %q, want it to name the annotation and the container left out", i, pods.TrimmedAnnotation, note)
		}
	}
	runtime.KeepAlive(kept)
}
