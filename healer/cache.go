package healer

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/podcache"
	"github.com/rejuv-dev/rejuv/healer/requestcache"
)

// cacheOptions say what the manager keeps of the objects it watches: of
// every pod and node of the cluster only what it reads (pods.Trim,
// trimNode), pods compactly (podcache.Configure, read back through
// podcache.New), requests (of the version requests, the one the manager
// watches) with what they hold alike kept once (requestcache.Configure),
// and of anything else everything but managedFields, which nothing in
// Rejuv reads. Of ConfigMaps it watches one, the emergency stop in the
// manager's namespace.
func cacheOptions(namespace string, requests client.Object) cache.Options {
	opts := cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Node{}: {Transform: trimNode},
			&corev1.ConfigMap{}: {
				Namespaces: map[string]cache.Config{namespace: {}},
				Field:      fields.OneTermEqualSelector("metadata.name", v1alpha1.PauseConfigMap),
			},
		},
	}
	podcache.Configure(&opts)
	requestcache.Configure(&opts, requests)
	return opts
}

// trimNode keeps of a node its identity, labels and Ready condition: the
// request controller asks only whether a pod's node exists and is Ready.
// A node's status otherwise lists its images, addresses and capacity.
func trimNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	out := &corev1.Node{
		TypeMeta: node.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: node.Name, UID: node.UID, ResourceVersion: node.ResourceVersion, Labels: node.Labels,
			CreationTimestamp: node.CreationTimestamp, DeletionTimestamp: node.DeletionTimestamp,
		},
	}
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			out.Status.Conditions = []corev1.NodeCondition{c}
		}
	}
	return out, nil
}
