package intern

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Values are the tables of the values the objects of the API hold alike,
// whatever their kind: strings, labels and annotations, owners. The
// values are shared by the objects in the manager's cache, which nothing
// changes in place: a Get or List copies them, unless it asks not to and
// only reads (client.UnsafeDisableDeepCopy).
type Values struct {
	strings Table[string]
	maps    Table[map[string]string]
	owners  Table[[]metav1.OwnerReference]
}

// String is the copy of v kept for all who hold it.
func (s *Values) String(v string) string {
	if v == "" {
		return v
	}
	return s.strings.Share(v, v)
}

// StringMap is the one map kept for all labels or annotations with the
// same keys and values: those of one template's pods.
func (s *Values) StringMap(m map[string]string) map[string]string {
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
		key = AppendPart(AppendPart(key, k), m[k])
	}
	return s.maps.Share(string(key), m)
}

// Keys is m with its keys, and the values of the keys alike says repeat,
// shared: for labels and annotations each object holds its own of, whose
// keys are always the same few and some values repeat (a request's
// policy, trigger and run) and others do not (its pod's name and UID).
func (s *Values) Keys(m map[string]string, alike func(key string) bool) map[string]string {
	if len(m) == 0 {
		return m
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		if alike(k) {
			v = s.String(v)
		}
		out[s.String(k)] = v
	}
	return out
}

// Owners is the one list kept for all owner references alike: a
// template's pods, a policy's requests.
func (s *Values) Owners(list []metav1.OwnerReference) []metav1.OwnerReference {
	if len(list) == 0 {
		return list
	}
	var key []byte
	for i := range list {
		data, err := list[i].Marshal()
		if err != nil {
			return list
		}
		key = AppendPart(key, string(data))
	}
	return s.owners.Share(string(key), list)
}
