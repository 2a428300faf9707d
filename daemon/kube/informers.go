package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// byPodUID indexes requests by the UID of their pod.
const byPodUID = "podUID"

// Informers are the daemon's caches of its own node's pods and active
// requests, so that its memory grows neither with the cluster nor with
// the requests kept after they completed.
type Informers struct {
	Pods, Requests cache.SharedIndexInformer
}

// NewInformers returns the caches of node's pods and requests; Run starts
// them.
func NewInformers(c *Client, node string) (*Informers, error) {
	onNode := fields.OneTermEqualSelector("spec.nodeName", node).String()
	// Requests leave the cache once the manager marks them completed: a
	// completed request has nothing left for the daemon to do.
	ofNode := labels.SelectorFromSet(labels.Set{v1beta1.NodeNameLabel: node, v1beta1.ActiveLabel: "true"}).String()
	podsOnNode := cache.NewFilteredListWatchFromClient(c.core, "pods", metav1.NamespaceAll, func(o *metav1.ListOptions) { o.FieldSelector = onNode })
	requestsOfNode := cache.NewFilteredListWatchFromClient(c.requests, "containerrecreaterequests", metav1.NamespaceAll, func(o *metav1.ListOptions) { o.LabelSelector = ofNode })
	in := &Informers{
		// Pods are listed in pages trimmed as they arrive, so that a
		// daemon that starts beside large pods never holds them all whole.
		Pods:     newInformer(pods.ListInPages(podsOnNode, trimPod), &corev1.Pod{}, trimPod),
		Requests: newInformer(requestsOfNode, &v1beta1.ContainerRecreateRequest{}, stripManagedFields),
	}
	err := in.Requests.AddIndexers(cache.Indexers{byPodUID: func(obj any) ([]string, error) {
		if crr, ok := obj.(*v1beta1.ContainerRecreateRequest); ok {
			if uid := crr.Labels[v1beta1.PodUIDLabel]; uid != "" {
				return []string{crr.Namespace + "/" + uid}, nil
			}
		}
		return nil, nil
	}})
	if err != nil {
		return nil, fmt.Errorf("index requests by pod: %w", err)
	}
	return in, nil
}

func newInformer(lw cache.ListerWatcher, obj runtime.Object, transform cache.TransformFunc) cache.SharedIndexInformer {
	inf := cache.NewSharedIndexInformer(lw, obj, 0, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	_ = inf.SetTransform(transform)
	return inf
}

// stripManagedFields drops an object's managedFields: nothing the daemon
// does reads them.
func stripManagedFields(o any) (any, error) {
	if m, ok := o.(metav1.Object); ok {
		m.SetManagedFields(nil)
	}
	return o, nil
}

// trimPod keeps of a pod what the manager keeps (pods.Trim, within its
// bounds on annotations and lifecycles, which the daemon does not read:
// a request carries the preStop), and whether each container has a
// readiness probe, which is all the daemon asks of probes. A pod's
// author chooses its size: whole, the pods of one node could take more
// than the daemon's memory.
func trimPod(o any) (any, error) {
	pod, ok := o.(*corev1.Pod)
	if !ok {
		return stripManagedFields(o)
	}
	out := pods.Trim(pod)
	for _, list := range [][2][]corev1.Container{{pod.Spec.Containers, out.Spec.Containers}, {pod.Spec.InitContainers, out.Spec.InitContainers}} {
		for i := range list[0] {
			if list[0][i].ReadinessProbe != nil {
				list[1][i].ReadinessProbe = &corev1.Probe{}
			}
		}
	}
	return out, nil
}

// Run starts the caches and waits until they hold what the API server
// has; false when ctx ended first.
func (in *Informers) Run(ctx context.Context) bool {
	go in.Pods.RunWithContext(ctx)
	go in.Requests.RunWithContext(ctx)
	return cache.WaitForCacheSync(ctx.Done(), in.Pods.HasSynced, in.Requests.HasSynced)
}

// Request returns a cached request.
func (in *Informers) Request(namespace, name string) (*v1beta1.ContainerRecreateRequest, bool) {
	return cached[*v1beta1.ContainerRecreateRequest](in.Requests, namespace, name)
}

// Pod returns a cached pod.
func (in *Informers) Pod(namespace, name string) (*corev1.Pod, bool) {
	return cached[*corev1.Pod](in.Pods, namespace, name)
}

// cached returns the object namespace/name of inf's cache.
func cached[T runtime.Object](inf cache.SharedIndexInformer, namespace, name string) (T, bool) {
	var zero T
	obj, ok, err := inf.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return zero, false
	}
	o, ok := obj.(T)
	return o, ok
}

// RequestsOfPod returns the cached requests of the pod with uid.
func (in *Informers) RequestsOfPod(namespace, uid string) []*v1beta1.ContainerRecreateRequest {
	objs, err := in.Requests.GetIndexer().ByIndex(byPodUID, namespace+"/"+uid)
	if err != nil {
		return nil
	}
	out := make([]*v1beta1.ContainerRecreateRequest, 0, len(objs))
	for _, o := range objs {
		if crr, ok := o.(*v1beta1.ContainerRecreateRequest); ok {
			out = append(out, crr)
		}
	}
	return out
}
