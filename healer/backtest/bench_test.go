package backtest

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/workingset"
)

// fleet is a generated history: pods whose working set a function gives,
// sampled every 30 s when a chunk is read, never held whole.
type fleet struct {
	pods  []Pod
	bytes func(pod int, at time.Time) int64
	index map[string]int
}

func newFleet(n int, from, to time.Time, bytes func(int, time.Time) int64) *fleet {
	f := &fleet{bytes: bytes, index: map[string]int{}}
	for i := range n {
		name := fmt.Sprintf("web-%04d", i)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID("uid-" + name), Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{NodeName: "node", Containers: []corev1.Container{{Name: "app",
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(1<<30, resource.BinarySI)}}}}},
		}
		f.pods = append(f.pods, Pod{Pod: pod, From: from, To: to, Containers: []Container{{Name: "app", Instances: []Instance{{ID: name, Started: from}}}}})
		f.index[name] = i
	}
	return f
}

func (f *fleet) Pods(context.Context, string, labels.Selector, time.Time, time.Time) ([]Pod, Coverage, error) {
	return f.pods, Coverage{}, nil
}

func (f *fleet) WorkingSet(_ context.Context, _ string, pods []string, from, to time.Time) (map[ContainerRef][]workingset.Sample, error) {
	out := make(map[ContainerRef][]workingset.Sample, len(pods))
	first := from.Truncate(30 * time.Second).Add(30*time.Second + 7*time.Second)
	for _, name := range pods {
		i := f.index[name]
		var list []workingset.Sample
		for at := first; !at.After(to); at = at.Add(30 * time.Second) {
			if at.After(from) {
				list = append(list, workingset.Sample{Pod: name, Container: "app", ContainerID: name, Time: at, Bytes: f.bytes(i, at)})
			}
		}
		out[ContainerRef{Pod: name, Container: "app"}] = list
	}
	return out, nil
}

// BenchmarkBacktest replays the memory-leak rule over a week of 30 s
// samples of 1,000 containers (a tenth leaking 10Mi/h, the rest a sawtooth
// about a flat 300Mi) and prints how long it took and the heap it held;
// with -short (make bench), a day of 100.
func BenchmarkBacktest(b *testing.B) {
	pods, span := 1000, 7*24*time.Hour
	if testing.Short() {
		pods, span = 100, 24*time.Hour
	}
	to := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	from := to.Add(-span)
	f := newFleet(pods, from.Add(-time.Hour), to, func(i int, at time.Time) int64 {
		h := at.Sub(from).Hours()
		if i%10 == 0 {
			return int64(300<<20 + 10<<20*h)
		}
		return int64(300<<20 + 20<<20*math.Sin(float64(i)+h*6))
	})
	p := leakPolicy(v1alpha1.Limits{MaxPerHour: new(int32(1000)), MaxMatchingPercent: new(int32(100))})
	for b.Loop() {
		var peak uint64
		done := make(chan struct{})
		go func() {
			var ms runtime.MemStats
			for {
				select {
				case <-done:
					return
				case <-time.After(500 * time.Millisecond):
					runtime.ReadMemStats(&ms)
					peak = max(peak, ms.HeapInuse)
				}
			}
		}()
		start := time.Now()
		r, err := Run(context.Background(), p, f, from, to, Options{})
		close(done)
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		passes := int(span / (30 * time.Second))
		b.Logf("%s of 30 s samples of %d containers: %s (%.1f µs a container and pass), heap in use at most %d MiB; %d recreations",
			span, pods, took.Round(time.Second), float64(took.Microseconds())/float64(pods*passes), peak>>20, r.Summary.Recreations)
	}
}
