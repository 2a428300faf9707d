package workingset

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy"
)

// Defaults suit metrics-server, which refreshes every 15 s: a sample every
// other refresh, and the hour the memory-leak rule judges from by default.
const (
	DefaultInterval = 30 * time.Second
	DefaultWindow   = time.Hour
)

// Sampler samples the working set of the containers of the pods that
// policies with memory rules select: one Source call per such namespace
// and interval. It keeps one window per container instance, in memory:
// a new leader, or a restarted manager, starts with empty windows (filled
// at once from a Source that keeps history, such as Prometheus). It runs
// in the leader only, beside the policy controller that reads it.
type Sampler struct {
	// Reader reads policies and pods, from the manager's cache.
	Reader client.Reader
	Source Source
	// Interval is the time between samples, and the width of a window's
	// slot; Window is how far back a window reaches.
	Interval, Window time.Duration
	Clock            clock.WithTicker

	mu sync.RWMutex
	// namespaces are the sampled namespaces by name.
	namespaces map[string]*namespaceWindows
}

// namespaceWindows is what the sampler holds for one namespace.
type namespaceWindows struct {
	// sampled is when the source last answered; zero before.
	sampled time.Time
	// err is the source's last error, nil once it answers again.
	err  error
	pods map[types.UID][]*Window
	// filled is set once a Historian filled the namespace's windows.
	filled bool
}

// NeedLeaderElection is true: only the leader samples.
func (s *Sampler) NeedLeaderElection() bool { return true }

// Start samples every interval until ctx ends.
func (s *Sampler) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("workingset").WithValues("source", s.Source.Name())
	ctx = ctrl.LoggerInto(ctx, log)
	log.Info("sampling the working set", "interval", s.Interval, "window", s.Window)
	t := s.clock().NewTicker(s.Interval)
	defer t.Stop()
	for {
		if err := s.SampleOnce(ctx); err != nil {
			log.Error(err, "sample the working set")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

func (s *Sampler) clock() clock.WithTicker {
	if s.Clock == nil {
		return clock.RealClock{}
	}
	return s.Clock
}

// slots is how many slots a window holds: one per interval of the window,
// and one more, so that a window spans the whole of it although samples
// come at the source's times, not exactly one per slot.
func (s *Sampler) slots() int { return slotsFor(s.Interval, s.Window) }

// slotsFor is how many slots a window of span holds at interval.
func slotsFor(interval, span time.Duration) int {
	return max(int((span+interval-1)/interval)+1, 2)
}

// SampleOnce samples every namespace that a policy with memory rules
// selects pods in, and forgets the windows of pods no longer selected.
func (s *Sampler) SampleOnce(ctx context.Context) error {
	wanted, err := s.wanted(ctx)
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.namespaces == nil {
		s.namespaces = map[string]*namespaceWindows{}
	}
	for ns := range s.namespaces {
		if _, ok := wanted[ns]; !ok {
			delete(s.namespaces, ns)
		}
	}
	s.mu.Unlock()
	for ns, selectors := range wanted {
		if err := s.sampleNamespace(ctx, ns, selectors); err != nil {
			ctrl.LoggerFrom(ctx).Info("no working set for a namespace", "namespace", ns, "error", err.Error())
		}
	}
	s.mu.RLock()
	windows.WithLabelValues(s.Source.Name()).Set(float64(s.count()))
	s.mu.RUnlock()
	return nil
}

// wanted maps each namespace with a policy whose rules read memory to
// those policies' selectors.
func (s *Sampler) wanted(ctx context.Context) (map[string][]labels.Selector, error) {
	var list v1alpha1.RecreatePolicyList
	if err := s.Reader.List(ctx, &list); err != nil {
		return nil, fmt.Errorf("list RecreatePolicies: %w", err)
	}
	out := map[string][]labels.Selector{}
	for i := range list.Items {
		p := &list.Items[i]
		if !policyspec.ReadsMemory(&p.Spec) {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.Selector)
		if err != nil {
			continue
		}
		out[p.Namespace] = append(out[p.Namespace], sel)
	}
	return out, nil
}

// sampleNamespace takes one sample of a namespace's selected pods.
func (s *Sampler) sampleNamespace(ctx context.Context, ns string, selectors []labels.Selector) error {
	var pods corev1.PodList
	// The cache's own pods, only read.
	if err := s.Reader.List(ctx, &pods, client.InNamespace(ns), client.UnsafeDisableDeepCopy); err != nil {
		return fmt.Errorf("list the pods of namespace %s: %w", ns, err)
	}
	selected := map[string]*corev1.Pod{}
	for i := range pods.Items {
		p := &pods.Items[i]
		for _, sel := range selectors {
			if sel.Matches(labels.Set(p.Labels)) {
				selected[p.Name] = p
				break
			}
		}
	}
	s.mu.RLock()
	nw := s.namespaces[ns]
	filled := nw != nil && nw.filled
	s.mu.RUnlock()

	start := s.clock().Now()
	var samples []Sample
	var err error
	h, isHistorian := s.Source.(Historian)
	if isHistorian && !filled {
		samples, err = h.History(ctx, ns, start.Add(-s.Window), s.Interval)
	} else {
		samples, err = s.Source.Sample(ctx, ns)
	}
	observeSample(s.Source.Name(), start, s.clock().Since(start), err)

	s.mu.Lock()
	defer s.mu.Unlock()
	nw = s.namespaces[ns]
	if nw == nil {
		nw = &namespaceWindows{pods: map[types.UID][]*Window{}}
		s.namespaces[ns] = nw
	}
	// Windows of pods no longer selected, or gone, are forgotten.
	keep := make(map[types.UID]bool, len(selected))
	for _, p := range selected {
		keep[p.UID] = true
	}
	for uid := range nw.pods {
		if !keep[uid] {
			delete(nw.pods, uid)
		}
	}
	if err != nil {
		nw.err = err
		return err
	}
	nw.err, nw.sampled = nil, start
	nw.filled = nw.filled || isHistorian
	for _, sm := range samples {
		p := selected[sm.Pod]
		if p == nil {
			continue
		}
		id, started, ok := runningContainer(p, sm.Container)
		if !ok || sm.Time.Before(started) || (sm.ContainerID != "" && !isInstance(p, sm.Container, sm.ContainerID)) {
			// Not running, or sampled before this instance started or
			// of another instance.
			continue
		}
		w := s.window(nw, p.UID, sm.Container, id)
		w.add(sm.Time.UnixNano()/int64(s.Interval), sm.Bytes)
	}
	return nil
}

// window is the window of a pod's container instance, new when the
// container was recreated since the last sample.
func (s *Sampler) window(nw *namespaceWindows, pod types.UID, container string, id uint64) *Window {
	ws := nw.pods[pod]
	for i, w := range ws {
		if w.name == container {
			if w.container != id {
				ws[i] = newWindow(container, s.slots(), id)
				return ws[i]
			}
			return w
		}
	}
	w := newWindow(container, s.slots(), id)
	nw.pods[pod] = append(ws, w)
	return w
}

// count is how many windows the sampler holds; mu held.
func (s *Sampler) count() int {
	n := 0
	for _, nw := range s.namespaces {
		for _, ws := range nw.pods {
			n += len(ws)
		}
	}
	return n
}

// runningContainer is the hashed ID and start of a pod's running
// container.
func runningContainer(p *corev1.Pod, name string) (uint64, time.Time, bool) {
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		if cs.Name != name || cs.State.Running == nil || cs.ContainerID == "" {
			continue
		}
		h := fnv.New64a()
		_, _ = h.Write([]byte(cs.ContainerID))
		return h.Sum64(), cs.State.Running.StartedAt.Time, true
	}
	return 0, time.Time{}, false
}

// isInstance reports whether id is the runtime's ID of the pod's running
// container name.
func isInstance(p *corev1.Pod, name, id string) bool {
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		if cs.Name == name {
			_, own, _ := strings.Cut(cs.ContainerID, "://")
			return own == id
		}
	}
	return false
}

// Memory is the window of a pod's container, or nil with why there is
// none.
func (s *Sampler) Memory(pod *corev1.Pod, container string) (*policy.MemoryWindow, string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	nw := s.namespaces[pod.Namespace]
	switch {
	case nw == nil || (nw.sampled.IsZero() && nw.err == nil):
		return nil, fmt.Sprintf("the namespace was not sampled yet (every %s)", s.Interval)
	case nw.err != nil:
		return nil, fmt.Sprintf("%s: %v", s.Source.Name(), nw.err)
	}
	id, _, running := runningContainer(pod, container)
	if !running {
		return nil, "the container is not running"
	}
	for _, w := range nw.pods[pod.UID] {
		if w.name == container && w.container == id {
			return w.summary(s.Interval), ""
		}
	}
	return nil, fmt.Sprintf("%s had no working set for the container at %s", s.Source.Name(), nw.sampled.UTC().Format(time.RFC3339))
}

// Describe says what the windows hold at most, for reasons.
func (s *Sampler) Describe() string {
	return fmt.Sprintf("windows of %s sampled every %s from %s", s.Window, s.Interval, s.Source.Name())
}
