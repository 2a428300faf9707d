package podcache

import (
	"encoding/binary"
	"slices"
	"strconv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sharedLimit bounds each table of shared values: past it a table starts
// afresh (the values handed out stay valid; only later pods share less).
const sharedLimit = 20_000

// sharedValues hands out one copy of each value many cached pods hold
// alike: the pods of one template have the same spec (as trimmed, but
// for the node), labels, annotations and owners, most pods the same
// conditions but for their times, and many pods the same namespace, node
// and images. The manager keeps every pod of the cluster, so each kept
// once is most of a pod's memory.
//
// The values are shared by the objects in the manager's cache, which
// nothing changes in place: a Get or List copies them, unless it asks not
// to and only reads (client.UnsafeDisableDeepCopy).
type sharedValues struct {
	strings    table[string]
	maps       table[map[string]string]
	owners     table[[]metav1.OwnerReference]
	specs      table[*corev1.PodSpec]
	conditions table[*corev1.PodCondition]
	images     table[*containerImage]
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

// ownerList shares a pod's owner references by their encoding.
func (s *sharedValues) ownerList(list []metav1.OwnerReference) []metav1.OwnerReference {
	if len(list) == 0 {
		return list
	}
	var key []byte
	for i := range list {
		data, err := list[i].Marshal()
		if err != nil {
			return list
		}
		key = appendPart(key, string(data))
	}
	return s.owners.share(string(key), list)
}

// spec shares a trimmed spec without its node by its encoding.
func (s *sharedValues) spec(spec *corev1.PodSpec) *corev1.PodSpec {
	data, err := spec.Marshal()
	if err != nil {
		return spec
	}
	return s.specs.share(string(data), spec)
}

// condition shares a condition without its times.
func (s *sharedValues) condition(c *corev1.PodCondition) *corev1.PodCondition {
	key := appendPart(appendPart(appendPart(appendPart(nil, string(c.Type)), string(c.Status)), c.Reason), c.Message)
	key = strconv.AppendInt(key, c.ObservedGeneration, 10)
	return s.conditions.share(string(key), c)
}

// image shares a container's name and image.
func (s *sharedValues) image(name, image string) *containerImage {
	key := string(appendPart(appendPart(nil, name), image))
	return s.images.share(key, &containerImage{name: name, image: image})
}

// appendPart appends a part of a key, its length first, so that no two
// lists of parts make the same key.
func appendPart(key []byte, part string) []byte {
	return append(binary.AppendUvarint(key, uint64(len(part))), part...)
}
