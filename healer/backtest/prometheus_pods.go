package backtest

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
)

// historyPods gathers what the queries said, by pod UID.
type historyPods struct {
	namespace string
	live      map[types.UID]*corev1.Pod
	byUID     map[types.UID]*historyPod
	// labelled are the label sets of kube_pod_labels, by pod UID.
	labelled map[types.UID]map[string]string
}

type historyPod struct {
	name       string
	node       string
	containers map[string]*historyContainer
}

type historyContainer struct {
	instances []*historyInstance
	limit     int64
}

type historyInstance struct {
	id      string
	started time.Time
}

func newHistoryPods(live []corev1.Pod, namespace string) *historyPods {
	h := &historyPods{namespace: namespace, live: map[types.UID]*corev1.Pod{}, byUID: map[types.UID]*historyPod{}, labelled: map[types.UID]map[string]string{}}
	for i := range live {
		if live[i].Namespace == namespace {
			h.live[live[i].UID] = &live[i]
		}
	}
	return h
}

// container is the container a cAdvisor series names, nil when its path
// names no container and pod.
func (h *historyPods) container(m model.Metric) (*historyContainer, string) {
	id, uid := idsOf(string(m["id"]))
	if id == "" || uid == "" {
		return nil, ""
	}
	pod := h.byUID[types.UID(uid)]
	if pod == nil {
		pod = &historyPod{name: string(m["pod"]), node: string(m["node"]), containers: map[string]*historyContainer{}}
		h.byUID[types.UID(uid)] = pod
	}
	name := string(m["container"])
	c := pod.containers[name]
	if c == nil {
		c = &historyContainer{}
		pod.containers[name] = c
	}
	return c, id
}

func (h *historyPods) instance(m model.Metric, started time.Time) {
	c, id := h.container(m)
	if c == nil {
		return
	}
	for _, in := range c.instances {
		if in.id == id {
			return
		}
	}
	c.instances = append(c.instances, &historyInstance{id: id, started: started})
}

func (h *historyPods) limit(m model.Metric, bytes int64) {
	if c, _ := h.container(m); c != nil {
		c.limit = max(c.limit, bytes)
	}
}

// labels records a kube_pod_labels series: label_<key> labels are the
// pod's, their keys as kube-state-metrics sanitized them.
func (h *historyPods) labels(m model.Metric) {
	uid := types.UID(m["uid"])
	if uid == "" {
		return
	}
	set := map[string]string{}
	for k, v := range m {
		if key, ok := strings.CutPrefix(string(k), "label_"); ok {
			set[key] = string(v)
		}
	}
	h.labelled[uid] = set
}

// pods are the pods selector chooses, by their live labels or else those
// of kube_pod_labels; the others are counted unmatched.
func (h *historyPods) pods(selector labels.Selector, kills map[ContainerRef][]time.Time, step time.Duration) ([]Pod, Coverage, error) {
	sanitized, err := sanitizedSelector(selector)
	if err != nil {
		return nil, Coverage{}, err
	}
	var out []Pod
	var cov Coverage
	uids := make([]types.UID, 0, len(h.byUID))
	for uid := range h.byUID {
		uids = append(uids, uid)
	}
	slices.Sort(uids)
	for _, uid := range uids {
		hp := h.byUID[uid]
		pod := h.live[uid]
		switch {
		case pod != nil:
			if !selector.Matches(labels.Set(pod.Labels)) {
				continue
			}
			pod = pod.DeepCopy()
		case h.labelled[uid] != nil:
			if !sanitized.Matches(labels.Set(h.labelled[uid])) {
				continue
			}
			pod = hp.object(h.namespace, uid, h.labelled[uid])
		default:
			cov.Unmatched++
			continue
		}
		out = append(out, hp.record(pod, kills, step))
	}
	if cov.Unmatched > 0 {
		cov.UnmatchedWhy = "neither running now nor in kube-state-metrics' kube_pod_labels with the labels the selector names (kube-state-metrics exports only the labels of --metric-labels-allowlist)"
	}
	return out, cov, nil
}

// object is a past pod as history has it: its name, UID, labels (their
// keys sanitized), node and its containers with their memory limits.
func (hp *historyPod) object(namespace string, uid types.UID, set map[string]string) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: hp.name, UID: uid, Labels: set}, Spec: corev1.PodSpec{NodeName: hp.node}}
	names := make([]string, 0, len(hp.containers))
	for name := range hp.containers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		c := corev1.Container{Name: name}
		if l := hp.containers[name].limit; l > 0 {
			c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(l, resource.BinarySI)}
		}
		pod.Spec.Containers = append(pod.Spec.Containers, c)
	}
	return pod
}

// record is the pod's history: its instances in order, each ended as
// the next starts (OOMKilled when a kill of the container came within two
// steps after). The last instance's end and the pod's are left to the
// samples: history has them when they stop (Pod.To).
func (hp *historyPod) record(pod *corev1.Pod, kills map[ContainerRef][]time.Time, step time.Duration) Pod {
	rec := Pod{Pod: pod}
	for _, c := range pod.Spec.Containers {
		hc := hp.containers[c.Name]
		if hc == nil {
			continue
		}
		slices.SortFunc(hc.instances, func(a, b *historyInstance) int { return a.started.Compare(b.started) })
		container := Container{Name: c.Name}
		for i, hi := range hc.instances {
			in := Instance{ID: hi.id, Started: hi.started}
			if rec.From.IsZero() || hi.started.Before(rec.From) {
				rec.From = hi.started
			}
			if i+1 < len(hc.instances) {
				next := hc.instances[i+1].started
				in.Ended = next
				for _, k := range kills[ContainerRef{Pod: string(pod.UID), Container: c.Name}] {
					if !k.Before(next) && k.Sub(next) <= 2*step {
						in.Reason, in.ExitCode = OOMKilled, 137
					}
				}
			}
			container.Instances = append(container.Instances, in)
		}
		rec.Containers = append(rec.Containers, container)
	}
	return rec
}

// sanitizedSelector is selector with its keys as kube-state-metrics
// writes them in kube_pod_labels' label names: every character but
// letters, digits and _ replaced by _.
func sanitizedSelector(selector labels.Selector) (labels.Selector, error) {
	reqs, selectable := selector.Requirements()
	out := labels.NewSelector()
	if !selectable {
		return labels.Nothing(), nil
	}
	for _, r := range reqs {
		values := r.Values().UnsortedList()
		op := r.Operator()
		if op == selection.DoubleEquals {
			op = selection.Equals
		}
		req, err := labels.NewRequirement(sanitizeKey(r.Key()), op, values)
		if err != nil {
			return nil, fmt.Errorf("selector key %s as kube-state-metrics writes it: %w", r.Key(), err)
		}
		out = out.Add(*req)
	}
	return out, nil
}

func sanitizeKey(key string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '_'
	}, key)
}
