package podcache

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// podInformer is the pod informer whose handlers are given each pod as a
// corev1.Pod built from what the cache keeps. Handlers only read it, as
// they only read the cache's own objects.
type podInformer struct {
	cache.Informer
}

// AddEventHandler implements cache.Informer.
func (i *podInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandler(podHandler{h})
}

// AddEventHandlerWithResyncPeriod implements cache.Informer.
func (i *podInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, resync time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithResyncPeriod(podHandler{h}, resync)
}

// AddEventHandlerWithOptions implements cache.Informer.
func (i *podInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, options toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	return i.Informer.AddEventHandlerWithOptions(podHandler{h}, options)
}

// podHandler gives its handler pods in place of what the cache keeps.
type podHandler struct {
	toolscache.ResourceEventHandler
}

func (h podHandler) OnAdd(obj any, isInInitialList bool) {
	h.ResourceEventHandler.OnAdd(podOf(obj), isInInitialList)
}

func (h podHandler) OnUpdate(oldObj, newObj any) {
	h.ResourceEventHandler.OnUpdate(podOf(oldObj), podOf(newObj))
}

func (h podHandler) OnDelete(obj any) {
	if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		gone.Obj = podOf(gone.Obj)
		h.ResourceEventHandler.OnDelete(gone)
		return
	}
	h.ResourceEventHandler.OnDelete(podOf(obj))
}

// podOf is the pod a cached object keeps, or the object itself.
func podOf(obj any) any {
	kept, ok := obj.(*compactPod)
	if !ok {
		return obj
	}
	pod := &corev1.Pod{}
	kept.podInto(pod)
	return pod
}
