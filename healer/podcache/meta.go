package podcache

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// compactMeta is what Trim keeps of a pod's metadata, its times in
// seconds: 136 bytes, where a metav1.ObjectMeta is 232 whatever it holds.
type compactMeta struct {
	name, namespace string
	uid             types.UID
	resourceVersion string
	generation      int64
	// created and deleted are the creation and deletion timestamps;
	// deleted is noTime while the pod is not being deleted.
	created, deleted    int64
	deletionGrace       *int64
	labels, annotations map[string]string
	owners              []metav1.OwnerReference
}

// keepMeta keeps the metadata Trim kept, its shared values shared
// through s.
func (s *sharedValues) keepMeta(m *metav1.ObjectMeta) compactMeta {
	return compactMeta{
		name: m.Name, namespace: s.String(m.Namespace), uid: m.UID, resourceVersion: m.ResourceVersion, generation: m.Generation,
		created: seconds(m.CreationTimestamp), deleted: secondsOfPointer(m.DeletionTimestamp), deletionGrace: m.DeletionGracePeriodSeconds,
		labels: s.StringMap(m.Labels), annotations: s.StringMap(m.Annotations), owners: s.Owners(m.OwnerReferences),
	}
}

// objectMeta is the metadata as Trim kept it; it shares what m points
// to.
func (m *compactMeta) objectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name: m.name, Namespace: m.namespace, UID: m.uid, ResourceVersion: m.resourceVersion, Generation: m.generation,
		CreationTimestamp: timeOf(m.created), DeletionTimestamp: timePointer(m.deleted), DeletionGracePeriodSeconds: m.deletionGrace,
		Labels: m.labels, Annotations: m.annotations, OwnerReferences: m.owners,
	}
}

// GetObjectMeta gives the informer's store and indexers, which find a
// kept pod's namespace and name through meta.Accessor and only read, the
// pod's metadata; it shares its maps with the kept pod.
func (c *compactPod) GetObjectMeta() metav1.Object {
	m := c.meta.objectMeta()
	return &m
}
