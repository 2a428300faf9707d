package pods

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
)

// ListPageSize is how many pods a cache's list (ListInPages) asks the API
// server for at once. A pod may weigh about 1.5 MB (the API server's
// limit on a request), so a page holds at most about 15 MB, decoded once.
const ListPageSize = 10

// listAttempts bounds how often ListInPages starts a list again because
// the API server expired its continue token (410) before the last page.
const listAttempts = 3

// pagedPods is a pod cache's ListerWatcher whose lists come in pages,
// each transformed as it arrives.
type pagedPods struct {
	lw        cache.ListerWatcherWithContext
	transform cache.TransformFunc
}

// ListInPages returns lw with its lists made of pages of ListPageSize
// pods, each pod put through transform as its page arrives, so that a
// cache that starts while many large pods exist holds one page of them
// whole, never the whole list: the reflector would otherwise decode the
// whole list (served at once from the API server's watch cache) before
// the informer's transform trims any of it. transform must be the
// informer's own and give the same pod when applied again, since the
// informer applies it to the listed pods too. Watches are lw's own: a
// watch's events are transformed one by one.
func ListInPages(lw cache.ListerWatcher, transform cache.TransformFunc) cache.ListerWatcher {
	return &pagedPods{lw: cache.ToListerWatcherWithContext(lw), transform: transform}
}

// List implements cache.Lister.
func (p *pagedPods) List(options metav1.ListOptions) (runtime.Object, error) {
	return p.ListWithContext(context.Background(), options)
}

// Watch implements cache.Watcher.
func (p *pagedPods) Watch(options metav1.ListOptions) (watch.Interface, error) {
	return p.lw.WatchWithContext(context.Background(), options)
}

// WatchWithContext implements cache.WatcherWithContext.
func (p *pagedPods) WatchWithContext(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
	return p.lw.WatchWithContext(ctx, options)
}

// ListWithContext implements cache.ListerWithContext: it lists the most
// recent pods (at least as recent as any resourceVersion the reflector
// asks for) in pages, keeps each page's pods transformed, and returns
// them as one list at the first page's resourceVersion, which all pages
// of a list share. A list whose continue token expires starts again.
func (p *pagedPods) ListWithContext(ctx context.Context, options metav1.ListOptions) (runtime.Object, error) {
	var err error
	for range listAttempts {
		var list *corev1.PodList
		if list, err = p.listOnce(ctx, options); err == nil || !apierrors.IsResourceExpired(err) {
			return list, err
		}
	}
	return nil, fmt.Errorf("list pods in pages of %d: the continue token expired %d times: %w", ListPageSize, listAttempts, err)
}

// listOnce lists pods in pages from the most recent resourceVersion.
func (p *pagedPods) listOnce(ctx context.Context, options metav1.ListOptions) (*corev1.PodList, error) {
	options.ResourceVersion, options.ResourceVersionMatch, options.Continue = "", "", ""
	options.Limit = ListPageSize
	out := &corev1.PodList{}
	for page := 0; ; page++ {
		obj, err := p.lw.ListWithContext(ctx, options)
		if err != nil {
			return nil, err
		}
		list, ok := obj.(*corev1.PodList)
		if !ok {
			return nil, fmt.Errorf("list pods: got a %T", obj)
		}
		if page == 0 {
			out.TypeMeta, out.ListMeta = list.TypeMeta, list.ListMeta
		}
		for i := range list.Items {
			kept, err := p.transform(&list.Items[i])
			if err != nil {
				return nil, fmt.Errorf("list pods: transform pod %s/%s: %w", list.Items[i].Namespace, list.Items[i].Name, err)
			}
			pod, ok := kept.(*corev1.Pod)
			if !ok {
				return nil, fmt.Errorf("list pods: the transform turned pod %s/%s into a %T", list.Items[i].Namespace, list.Items[i].Name, kept)
			}
			out.Items = append(out.Items, *pod)
		}
		if list.Continue == "" {
			out.Continue, out.RemainingItemCount = "", nil
			return out, nil
		}
		options.Continue = list.Continue
	}
}
