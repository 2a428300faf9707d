package workingset

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/heap"
)

// fakeSource answers with the working sets set per namespace and counts
// the calls.
type fakeSource struct {
	mu    sync.Mutex
	now   func() time.Time
	bytes map[string]map[string]int64 // namespace -> pod -> bytes of container app
	err   error
	calls map[string]int
	// ids, when set for a pod, is the container ID its samples carry.
	ids map[string]string
}

func (f *fakeSource) Name() string { return "fake" }

func (f *fakeSource) Sample(_ context.Context, ns string) ([]Sample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[ns]++
	if f.err != nil {
		return nil, f.err
	}
	var out []Sample
	for pod, b := range f.bytes[ns] {
		out = append(out, Sample{Pod: pod, Container: "app", ContainerID: f.ids[pod], Time: f.now(), Bytes: b})
	}
	return out, nil
}

// historian is a fakeSource whose History gives ten samples a pod, growing.
type historian struct{ *fakeSource }

func (h historian) History(_ context.Context, ns string, since time.Time, step time.Duration) ([]Sample, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls[ns+" history"]++
	var out []Sample
	for pod, b := range h.bytes[ns] {
		for i := range 10 {
			out = append(out, Sample{Pod: pod, Container: "app", Time: since.Add(time.Duration(i+1) * step), Bytes: b + int64(i)*mib})
		}
	}
	return out, nil
}

func scheme(t testing.TB) *runtime.Scheme {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	if err := v1alpha1.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func memoryPolicy(ns, name, rule string) *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name), Generation: 1},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Rules:    []v1alpha1.Rule{{Name: "r", Builtin: rule}},
		},
	}
}

func runningPod(ns, name, app, id string, started time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "/" + name), Labels: map[string]string{"app": app}},
		Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", ContainerID: "containerd://" + id,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}},
		}}},
	}
}

type samplerTest struct {
	t      testing.TB
	clock  *clocktesting.FakeClock
	source *fakeSource
	client client.Client
	s      *Sampler
}

func newSamplerTest(t testing.TB, objs ...client.Object) *samplerTest {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC))
	src := &fakeSource{now: clk.Now, bytes: map[string]map[string]int64{}, calls: map[string]int{}}
	c := fake.NewClientBuilder().WithScheme(scheme(t)).WithObjects(objs...).WithStatusSubresource(&corev1.Pod{}).Build()
	return &samplerTest{t: t, clock: clk, source: src, client: c,
		s: &Sampler{Reader: c, Source: src, Interval: 30 * time.Second, Window: time.Hour, Clock: clk}}
}

// pass takes one sample and steps the clock an interval.
func (st *samplerTest) pass() {
	st.t.Helper()
	if err := st.s.SampleOnce(context.Background()); err != nil {
		st.t.Fatal(err)
	}
	st.clock.Step(st.s.Interval)
}

func (st *samplerTest) pod(ns, name string) *corev1.Pod {
	st.t.Helper()
	p := &corev1.Pod{}
	if err := st.client.Get(context.Background(), types.NamespacedName{Namespace: ns, Name: name}, p); err != nil {
		st.t.Fatal(err)
	}
	return p
}

// TestSamplerSamplesWhatMemoryRulesSelect: one call per namespace and
// pass, only for namespaces with a policy whose rules read memory, and
// windows only for the pods such a policy selects.
func TestSamplerSamplesWhatMemoryRulesSelect(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	st := newSamplerTest(t,
		memoryPolicy("shop", "leaks", "memory-leak"),
		memoryPolicy("blog", "stuck", "stuck-readiness"),
		runningPod("shop", "web-0", "web", "a", start),
		runningPod("shop", "db-0", "db", "b", start),
		runningPod("blog", "web-0", "web", "c", start),
	)
	st.source.bytes["shop"] = map[string]int64{"web-0": 100 * mib, "db-0": 50 * mib}
	st.source.bytes["blog"] = map[string]int64{"web-0": 10 * mib}
	for i := range 5 {
		st.source.bytes["shop"]["web-0"] = int64(100+i) * mib
		st.pass()
	}
	if st.source.calls["shop"] != 5 || st.source.calls["blog"] != 0 {
		t.Errorf("calls %v, want 5 for shop and none for blog (no memory rule)", st.source.calls)
	}
	m, why := st.s.Memory(st.pod("shop", "web-0"), "app")
	if m == nil || m.Samples != 5 || m.WorkingSetBytes != 104*mib || m.WindowSeconds != 150 {
		t.Fatalf("web-0's window %+v (%s), want 5 samples over 150s ending at 104Mi", m, why)
	}
	if perHour := m.SlopeBytesPerSecond * 3600 / mib; perHour != 120 || m.R2 != 1 {
		t.Errorf("slope %g MiB/h r2 %g, want 120 and 1", perHour, m.R2)
	}
	if m, why := st.s.Memory(st.pod("shop", "db-0"), "app"); m != nil || !strings.Contains(why, "had no working set") {
		t.Errorf("db-0, which no memory policy selects, has %+v (%s)", m, why)
	}
	if m, why := st.s.Memory(st.pod("blog", "web-0"), "app"); m != nil || !strings.Contains(why, "not sampled yet") {
		t.Errorf("blog's web-0 has %+v (%s), want not sampled", m, why)
	}
}

// TestSamplerStartsANewWindowForANewContainer: a recreated container's
// history does not carry over (a leak would otherwise be recreated again
// at once), and a sample taken before the new container started is not
// counted.
func TestSamplerStartsANewWindowForANewContainer(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	st := newSamplerTest(t, memoryPolicy("shop", "leaks", "memory-leak"), runningPod("shop", "web-0", "web", "a", start))
	st.source.bytes["shop"] = map[string]int64{"web-0": 500 * mib}
	for range 4 {
		st.pass()
	}
	// The container is recreated: a new ID, started now; the source
	// still answers with the old container's sample, stamped earlier.
	pod := st.pod("shop", "web-0")
	pod.Status.ContainerStatuses[0].ContainerID = "containerd://b"
	pod.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.NewTime(st.clock.Now().Add(time.Second))
	if err := st.client.Status().Update(context.Background(), pod); err != nil {
		t.Fatal(err)
	}
	st.pass()
	if m, _ := st.s.Memory(pod, "app"); m != nil {
		t.Fatalf("the new container has the old one's window: %+v", m)
	}
	st.source.bytes["shop"]["web-0"] = 20 * mib
	st.pass()
	if m, _ := st.s.Memory(pod, "app"); m == nil || m.Samples != 1 || m.WorkingSetBytes != 20*mib {
		t.Errorf("the new container's window is %+v, want its one sample of 20Mi", m)
	}
}

// TestSamplerCountsOnlyTheRunningInstance: a source that says which
// container instance a sample is of (Prometheus, from the cgroup) has the
// samples of another instance left out.
func TestSamplerCountsOnlyTheRunningInstance(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	st := newSamplerTest(t, memoryPolicy("shop", "leaks", "memory-leak"), runningPod("shop", "web-0", "web", "a", start))
	st.source.bytes["shop"] = map[string]int64{"web-0": 100 * mib}
	st.source.ids = map[string]string{"web-0": "old"}
	st.pass()
	if m, _ := st.s.Memory(st.pod("shop", "web-0"), "app"); m != nil {
		t.Fatalf("a sample of another instance was counted: %+v", m)
	}
	st.source.ids["web-0"] = "a"
	st.pass()
	if m, _ := st.s.Memory(st.pod("shop", "web-0"), "app"); m == nil || m.Samples != 1 {
		t.Errorf("the running instance's sample: %+v, want one", m)
	}
	// Once the container stops (killed, waiting to start again), its
	// window is no longer its.
	pod := st.pod("shop", "web-0")
	pod.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	if m, why := st.s.Memory(pod, "app"); m != nil || why != "the container is not running" {
		t.Errorf("a stopped container's memory: %+v, %q", m, why)
	}
}

// TestSamplerForgets: the windows of a deleted pod, and of a namespace
// whose memory policy is gone, are dropped.
func TestSamplerForgets(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	p := memoryPolicy("shop", "leaks", "memory-near-limit")
	st := newSamplerTest(t, p, runningPod("shop", "web-0", "web", "a", start), runningPod("shop", "web-1", "web", "b", start))
	st.source.bytes["shop"] = map[string]int64{"web-0": mib, "web-1": mib}
	st.pass()
	if n := st.s.count(); n != 2 {
		t.Fatalf("%d windows, want 2", n)
	}
	if err := st.client.Delete(context.Background(), st.pod("shop", "web-1")); err != nil {
		t.Fatal(err)
	}
	st.pass()
	if n := st.s.count(); n != 1 {
		t.Errorf("%d windows after a pod was deleted, want 1", n)
	}
	if err := st.client.Delete(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	st.pass()
	if n := st.s.count(); n != 0 || len(st.s.namespaces) != 0 {
		t.Errorf("%d windows in %d namespaces after the policy was deleted, want none", n, len(st.s.namespaces))
	}
}

// TestSamplerSaysWhatTheSourceAnswered: a failing source leaves no
// window, and the reason carries its error; once it answers, the windows
// fill.
func TestSamplerSaysWhatTheSourceAnswered(t *testing.T) {
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	st := newSamplerTest(t, memoryPolicy("shop", "leaks", "memory-leak"), runningPod("shop", "web-0", "web", "a", start))
	st.source.bytes["shop"] = map[string]int64{"web-0": mib}
	st.source.err = errors.New(`the server could not find the requested resource (get pods.metrics.k8s.io)`)
	st.pass()
	m, why := st.s.Memory(st.pod("shop", "web-0"), "app")
	if m != nil || why != "fake: the server could not find the requested resource (get pods.metrics.k8s.io)" {
		t.Errorf("with a failing source: %+v, %q", m, why)
	}
	st.source.err = nil
	st.pass()
	if m, why := st.s.Memory(st.pod("shop", "web-0"), "app"); m == nil {
		t.Errorf("no window once the source answers: %s", why)
	}
}

// TestSamplerFillsFromHistory: a source that keeps history fills a
// namespace's windows at the first pass (a restarted manager judges at
// once), then samples as usual.
func TestSamplerFillsFromHistory(t *testing.T) {
	start := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
	st := newSamplerTest(t, memoryPolicy("shop", "leaks", "memory-leak"), runningPod("shop", "web-0", "web", "a", start))
	st.source.bytes["shop"] = map[string]int64{"web-0": 100 * mib}
	st.s.Source = historian{st.source}
	st.pass()
	m, _ := st.s.Memory(st.pod("shop", "web-0"), "app")
	if m == nil || m.Samples != 10 || m.SlopeBytesPerSecond*3600/mib != 120 {
		t.Fatalf("after the first pass: %+v, want the ten samples of the history growing 120Mi/h", m)
	}
	st.pass()
	if st.source.calls["shop history"] != 1 || st.source.calls["shop"] != 1 {
		t.Errorf("calls %v, want one history and then one sample", st.source.calls)
	}
}

// BenchmarkSamplerMemory reports the heap a window costs per container
// at the default settings, with 10,000 containers in 100 namespaces, the
// source calls a pass makes and its time (the source answering at once).
func BenchmarkSamplerMemory(b *testing.B) {
	const namespaces, pods = 100, 100
	for range b.N {
		var objs []client.Object
		started := time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)
		for n := range namespaces {
			ns := fmt.Sprintf("ns-%d", n)
			objs = append(objs, memoryPolicy(ns, "leaks", "memory-leak"))
			for p := range pods {
				objs = append(objs, runningPod(ns, fmt.Sprintf("web-%d", p), "web", fmt.Sprintf("%d-%d", n, p), started))
			}
		}
		st := newSamplerTest(b)
		st.s.Reader = newStaticReader(objs)
		st.s.Interval, st.s.Window = DefaultInterval, DefaultWindow
		for n := range namespaces {
			ns := fmt.Sprintf("ns-%d", n)
			st.source.bytes[ns] = map[string]int64{}
			for p := range pods {
				st.source.bytes[ns][fmt.Sprintf("web-%d", p)] = 100 * mib
			}
		}
		before := heap.Live()
		start := time.Now()
		for range st.s.slots() {
			st.pass()
		}
		perPass := time.Since(start) / time.Duration(st.s.slots())
		after := heap.Live()
		b.ReportMetric(float64(perPass.Milliseconds()), "ms/pass")
		containers := st.s.count()
		b.ReportMetric(float64(after-before)/float64(containers), "B/container")
		b.ReportMetric(float64(st.source.calls["ns-0"])/float64(st.s.slots())*namespaces, "calls/pass")
		b.ReportMetric(float64(4*st.s.slots()), "B-of-samples/container")
	}
}

// staticReader lists fixed policies and pods without copying them deeply,
// so that the benchmark measures the sampler, not a fake client.
type staticReader struct {
	policies []v1alpha1.RecreatePolicy
	pods     map[string][]corev1.Pod
}

func newStaticReader(objs []client.Object) *staticReader {
	r := &staticReader{pods: map[string][]corev1.Pod{}}
	for _, o := range objs {
		switch o := o.(type) {
		case *v1alpha1.RecreatePolicy:
			r.policies = append(r.policies, *o)
		case *corev1.Pod:
			r.pods[o.Namespace] = append(r.pods[o.Namespace], *o)
		}
	}
	return r
}

func (r *staticReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("staticReader: no Get")
}

func (r *staticReader) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	switch l := list.(type) {
	case *v1alpha1.RecreatePolicyList:
		l.Items = r.policies
	case *corev1.PodList:
		l.Items = r.pods[o.Namespace]
	default:
		return fmt.Errorf("staticReader: no list of %T", list)
	}
	return nil
}

// TestSamplerWindowSpansItsWholeLength: with samples stamped at the
// source's times, off the slots by up to a third of an interval, a full
// window at the defaults always spans the hour the memory-leak rule
// judges from by default.
func TestSamplerWindowSpansItsWholeLength(t *testing.T) {
	start := time.Date(2026, 11, 23, 7, 0, 0, 0, time.UTC)
	st := newSamplerTest(t, memoryPolicy("shop", "leaks", "memory-leak"), runningPod("shop", "web-0", "web", "a", start))
	st.s.Interval, st.s.Window = DefaultInterval, DefaultWindow
	st.source.bytes["shop"] = map[string]int64{"web-0": 100 * mib}
	pass := 0
	st.source.now = func() time.Time {
		// The source's clock runs 0 to 10 s behind, changing every pass.
		return st.clock.Now().Add(-time.Duration(pass*7%11) * time.Second)
	}
	for pass = range 240 {
		st.pass()
		m, _ := st.s.Memory(st.pod("shop", "web-0"), "app")
		if pass >= 121 && (m == nil || m.WindowSeconds < 3600) {
			t.Fatalf("pass %d: the window spans %+v, want an hour", pass, m)
		}
	}
}
