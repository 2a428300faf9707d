package healer

import (
	"encoding/binary"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sharedLimit bounds each table of shared values: past it a table starts
// afresh (the values handed out stay valid; only later pods share less).
const sharedLimit = 20_000

// sharedValues hands out one copy of each value many cached pods hold
// alike: the pods of one template have the same labels, annotations,
// owners and containers (as trimmed), and many pods the same namespace,
// node and images. The manager keeps every pod of the cluster, so each
// kept once is most of a pod's memory.
//
// The values are shared by the objects in the manager's cache, which
// nothing changes in place: a Get or List copies them, unless it asks not
// to and only reads (client.UnsafeDisableDeepCopy).
type sharedValues struct {
	strings    table[string]
	maps       table[map[string]string]
	owners     table[[]metav1.OwnerReference]
	containers table[[]corev1.Container]
	gates      table[[]corev1.PodReadinessGate]
}

type table[V any] struct {
	mu     sync.Mutex
	values map[string]V
}

// share returns the value kept for key, keeping v for it when there is
// none.
func (t *table[V]) share(key string, v V) V {
	t.mu.Lock()
	defer t.mu.Unlock()
	if kept, ok := t.values[key]; ok {
		return kept
	}
	if t.values == nil || len(t.values) >= sharedLimit {
		t.values = map[string]V{}
	}
	t.values[key] = v
	return v
}

// pod makes the trimmed pod hold the shared copies of its values.
func (s *sharedValues) pod(pod *corev1.Pod) {
	m := &pod.ObjectMeta
	m.Namespace = s.string(m.Namespace)
	m.Labels = s.stringMap(m.Labels)
	m.Annotations = s.stringMap(m.Annotations)
	m.OwnerReferences = shareList(&s.owners, m.OwnerReferences)
	sp := &pod.Spec
	sp.NodeName = s.string(sp.NodeName)
	sp.ServiceAccountName = s.string(sp.ServiceAccountName)
	sp.PriorityClassName = s.string(sp.PriorityClassName)
	sp.Containers = shareList(&s.containers, sp.Containers)
	sp.InitContainers = shareList(&s.containers, sp.InitContainers)
	sp.ReadinessGates = shareList(&s.gates, sp.ReadinessGates)
	st := &pod.Status
	st.HostIP = s.string(st.HostIP)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Reason, c.Message = s.string(c.Reason), s.string(c.Message)
	}
	for _, statuses := range [][]corev1.ContainerStatus{st.ContainerStatuses, st.InitContainerStatuses} {
		for i := range statuses {
			cs := &statuses[i]
			cs.Name, cs.Image = s.string(cs.Name), s.string(cs.Image)
		}
	}
}

func (s *sharedValues) string(v string) string {
	if v == "" {
		return v
	}
	return s.strings.share(v, v)
}

// stringMap shares labels and annotations by their keys and values.
func (s *sharedValues) stringMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return m
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	var key []byte
	for _, k := range names {
		key = appendPart(appendPart(key, k), m[k])
	}
	return s.maps.share(string(key), m)
}

// marshaler is an API type's protobuf encoding, which identifies its
// value.
type marshaler interface {
	Marshal() ([]byte, error)
}

// shareList shares a list by the encoding of its items.
func shareList[E any, PE interface {
	*E
	marshaler
}](t *table[[]E], list []E) []E {
	if len(list) == 0 {
		return list
	}
	var key []byte
	for i := range list {
		data, err := PE(&list[i]).Marshal()
		if err != nil {
			return list
		}
		key = appendPart(key, string(data))
	}
	return t.share(string(key), list)
}

// appendPart appends a part of a key, its length first, so that no two
// lists of parts make the same key.
func appendPart(key []byte, part string) []byte {
	return append(binary.AppendUvarint(key, uint64(len(part))), part...)
}
