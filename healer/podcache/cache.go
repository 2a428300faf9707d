package podcache

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// Configure sets up opts to keep pods compactly: each pod trimmed
// (pods.Trim) as its page of the first list arrives (pods.ListInPages), so
// that a starting replica never holds every pod of the cluster whole,
// then kept as a compactPod whose shared values are kept once. Pods are
// read back through the cache New makes from opts.
func Configure(opts *cache.Options) {
	s := &sharedValues{}
	if opts.ByObject == nil {
		opts.ByObject = map[client.Object]cache.ByObject{}
	}
	opts.ByObject[&corev1.Pod{}] = cache.ByObject{Transform: func(obj any) (any, error) {
		if pod, ok := obj.(*corev1.Pod); ok {
			return s.compact(pod), nil
		}
		return obj, nil
	}}
	newInformer := opts.NewInformer
	if newInformer == nil {
		newInformer = toolscache.NewSharedIndexInformer
	}
	opts.NewInformer = func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if _, ok := obj.(*corev1.Pod); ok {
			lw = pods.ListInPages(lw, pods.TrimObject)
		}
		return newInformer(lw, obj, resync, indexers)
	}
}

// New is controller-runtime's cache (a cache.NewCacheFunc) whose pods,
// kept compactly as Configure set up, are given back as corev1.Pod: by
// Get and List, and to the event handlers of its pod informer.
func New(cfg *rest.Config, opts cache.Options) (cache.Cache, error) {
	c, err := cache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	return &podCache{Cache: c}, nil
}

// podCache reads pods from the informer's store itself: controller-runtime's
// reader gives back only the type it stores.
type podCache struct {
	cache.Cache
}

var podGVK = corev1.SchemeGroupVersion.WithKind("Pod")

// Get implements client.Reader.
func (c *podCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return c.Cache.Get(ctx, key, obj, opts...)
	}
	store, err := c.store(ctx)
	if err != nil {
		return err
	}
	item, exists, err := store.GetByKey(key.Namespace + "/" + key.Name)
	if err != nil {
		return fmt.Errorf("read pod %s from the cache: %w", key, err)
	}
	if !exists {
		return apierrors.NewNotFound(corev1.Resource("pods"), key.Name)
	}
	kept, ok := item.(*compactPod)
	if !ok {
		return fmt.Errorf("read pod %s from the cache: it holds a %T", key, item)
	}
	o := client.GetOptions{}
	o.ApplyOptions(opts)
	kept.readInto(pod, copyRead(o.UnsafeDisableDeepCopy))
	return nil
}

// List implements client.Reader. As controller-runtime's cache, it takes
// a namespace, a label selector and a limit, and no continue token; its
// pods have no field index.
func (c *podCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	out, ok := list.(*corev1.PodList)
	if !ok {
		return c.Cache.List(ctx, list, opts...)
	}
	o := client.ListOptions{}
	o.ApplyOptions(opts)
	switch {
	case o.Continue != "":
		return errors.New("list pods: continue list option is not supported by the cache")
	case o.FieldSelector != nil && !o.FieldSelector.Empty():
		return fmt.Errorf("list pods: the cache has no field index for %q", o.FieldSelector)
	}
	store, err := c.store(ctx)
	if err != nil {
		return err
	}
	var items []any
	if o.Namespace != "" {
		if items, err = store.ByIndex(toolscache.NamespaceIndex, o.Namespace); err != nil {
			return fmt.Errorf("list the pods of namespace %s from the cache: %w", o.Namespace, err)
		}
	} else {
		items = store.List()
	}
	deepCopy := copyRead(o.UnsafeDisableDeepCopy)
	out.Items = make([]corev1.Pod, 0, len(items))
	for _, item := range items {
		if o.Limit > 0 && int64(len(out.Items)) >= o.Limit {
			break
		}
		kept, ok := item.(*compactPod)
		if !ok {
			return fmt.Errorf("list pods: the cache holds a %T", item)
		}
		if o.LabelSelector != nil && !o.LabelSelector.Matches(labels.Set(kept.meta.labels)) {
			continue
		}
		out.Items = append(out.Items, corev1.Pod{})
		kept.readInto(&out.Items[len(out.Items)-1], deepCopy)
	}
	out.ResourceVersion, out.Continue = "", "continue-not-supported"
	return nil
}

// copyRead says whether a read copies what it gives back: unless the
// reader asked not to (client.UnsafeDisableDeepCopy), as with
// controller-runtime's reader.
func copyRead(unsafe *bool) bool {
	return unsafe == nil || !*unsafe
}

// readInto writes the pod kept into pod, a copy of its own when deepCopy,
// else sharing what kept points to (see podInto).
func (c *compactPod) readInto(pod *corev1.Pod, deepCopy bool) {
	if !deepCopy {
		c.podInto(pod)
		return
	}
	var shared corev1.Pod
	c.podInto(&shared)
	shared.DeepCopyInto(pod)
}

// store is the pod informer's store, once it has synced. Like
// controller-runtime's reader, it starts the informer if need be and
// waits for its sync, and answers ErrCacheNotStarted before the cache
// starts.
func (c *podCache) store(ctx context.Context) (toolscache.Indexer, error) {
	inf, err := c.Cache.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return nil, fmt.Errorf("get the pod informer: %w", err)
	}
	if !inf.HasSynced() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, &cache.ErrCacheNotStarted{}
	}
	indexed, ok := inf.(interface{ GetIndexer() toolscache.Indexer })
	if !ok {
		return nil, fmt.Errorf("the pod informer (%T) has no store to read", inf)
	}
	return indexed.GetIndexer(), nil
}

// GetInformer implements cache.Informers: the pod informer's handlers are
// given pods.
func (c *podCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformer(ctx, obj, opts...)
	if _, ok := obj.(*corev1.Pod); !ok || err != nil {
		return inf, err
	}
	return &podInformer{Informer: inf}, nil
}

// GetInformerForKind implements cache.Informers.
func (c *podCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformerForKind(ctx, gvk, opts...)
	if gvk != podGVK || err != nil {
		return inf, err
	}
	return &podInformer{Informer: inf}, nil
}

// IndexField implements client.FieldIndexer: extract is given pods.
func (c *podCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if _, ok := obj.(*corev1.Pod); !ok {
		return c.Cache.IndexField(ctx, obj, field, extract)
	}
	return c.Cache.IndexField(ctx, obj, field, func(o client.Object) []string {
		return extract(podOf(o).(client.Object))
	})
}
