package podcache

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/healer/intern"
)

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
	intern.Values
	specs      intern.Table[*corev1.PodSpec]
	conditions intern.Table[*corev1.PodCondition]
	images     intern.Table[*containerImage]
}

// spec shares a trimmed spec without its node by its encoding.
func (s *sharedValues) spec(spec *corev1.PodSpec) *corev1.PodSpec {
	data, err := spec.Marshal()
	if err != nil {
		return spec
	}
	return s.specs.Share(string(data), spec)
}

// condition shares a condition without its times.
func (s *sharedValues) condition(c *corev1.PodCondition) *corev1.PodCondition {
	key := intern.AppendPart(intern.AppendPart(intern.AppendPart(intern.AppendPart(nil, string(c.Type)), string(c.Status)), c.Reason), c.Message)
	key = strconv.AppendInt(key, c.ObservedGeneration, 10)
	return s.conditions.Share(string(key), c)
}

// image shares a container's name and image.
func (s *sharedValues) image(name, image string) *containerImage {
	key := string(intern.AppendPart(intern.AppendPart(nil, name), image))
	return s.images.Share(key, &containerImage{name: name, image: image})
}
