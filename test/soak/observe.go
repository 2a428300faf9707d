package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/soak/invariant"
)

// observer watches the soak's namespaces and Rejuv's pods from outside,
// with informers that list again after the API server comes back, and
// hands each event, stamped with the time it arrived, to sink in the
// order they arrive.
type observer struct {
	kube  kubernetes.Interface
	watch client.WithWatch
	sink  chan<- invariant.Observation
	// restarted is called, in its own goroutine, when a container of
	// one of Rejuv's pods has restarted.
	restarted func(*corev1.Pod)

	// stopped ends with the watches: a handler then drops what it has
	// rather than wait for a checker that has finished.
	stopped <-chan struct{}

	mu       sync.Mutex
	restarts map[types.UID]int32
}

// start runs the informers until ctx ends and waits until each has
// listed once.
func (o *observer) start(ctx context.Context) error {
	o.stopped = ctx.Done()
	soak := func(m metav1.Object) bool { return strings.HasPrefix(m.GetNamespace(), namespacePrefix) }
	informers := []toolscache.SharedIndexInformer{
		o.informer(&corev1.Pod{}, func(obj runtime.Object, gone bool) invariant.Observation {
			p := obj.(*corev1.Pod)
			switch {
			case soak(p):
				return invariant.PodSeen{At: time.Now(), Pod: p, Gone: gone}
			case p.Namespace == deploy.Namespace:
				o.component(p)
				return invariant.ComponentSeen{At: time.Now(), Pod: p, Gone: gone}
			}
			return nil
		}, o.typedListWatch(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return o.kube.CoreV1().Pods("").List(ctx, opts)
		}, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return o.kube.CoreV1().Pods("").Watch(ctx, opts)
		})),
		o.informer(&policyv1.PodDisruptionBudget{}, func(obj runtime.Object, gone bool) invariant.Observation {
			if b := obj.(*policyv1.PodDisruptionBudget); soak(b) {
				return invariant.BudgetSeen{At: time.Now(), Budget: b, Gone: gone}
			}
			return nil
		}, o.typedListWatch(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return o.kube.PolicyV1().PodDisruptionBudgets("").List(ctx, opts)
		}, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return o.kube.PolicyV1().PodDisruptionBudgets("").Watch(ctx, opts)
		})),
		o.informer(&v1beta1.ContainerRecreateRequest{}, func(obj runtime.Object, gone bool) invariant.Observation {
			if r := obj.(*v1beta1.ContainerRecreateRequest); soak(r) {
				return invariant.RequestSeen{At: time.Now(), Request: r, Gone: gone}
			}
			return nil
		}, o.runtimeListWatch(&v1beta1.ContainerRecreateRequestList{})),
		o.informer(&v1alpha1.RecreatePolicy{}, func(obj runtime.Object, gone bool) invariant.Observation {
			if p := obj.(*v1alpha1.RecreatePolicy); soak(p) {
				return invariant.PolicySeen{At: time.Now(), Policy: p, Gone: gone}
			}
			return nil
		}, o.runtimeListWatch(&v1alpha1.RecreatePolicyList{})),
	}
	var synced []toolscache.InformerSynced
	for _, inf := range informers {
		go inf.RunWithContext(ctx)
		synced = append(synced, inf.HasSynced)
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("observe the cluster: the informers did not list")
	}
	return nil
}

// component calls restarted when p's containers have restarted more
// often than when last seen.
func (o *observer) component(p *corev1.Pod) {
	var n int32
	for _, c := range p.Status.ContainerStatuses {
		n += c.RestartCount
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.restarts == nil {
		o.restarts = map[types.UID]int32{}
	}
	if before, ok := o.restarts[p.UID]; ok && n > before {
		go o.restarted(p)
	}
	o.restarts[p.UID] = n
}

// informer hands every add, update and delete of obj's kind to o.sink as
// what observe makes of it (nil: not the soak's).
func (o *observer) informer(obj runtime.Object, observe func(obj runtime.Object, gone bool) invariant.Observation, lw toolscache.ListerWatcher) toolscache.SharedIndexInformer {
	inf := toolscache.NewSharedIndexInformer(lw, obj, 0, toolscache.Indexers{})
	send := func(x any, gone bool) {
		if d, ok := x.(toolscache.DeletedFinalStateUnknown); ok {
			x = d.Obj
		}
		if obj, ok := x.(runtime.Object); ok {
			if seen := observe(obj, gone); seen != nil {
				select {
				case o.sink <- seen:
				case <-o.stopped:
				}
			}
		}
	}
	_, _ = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(x any) { send(x, false) },
		UpdateFunc: func(_, x any) { send(x, false) },
		DeleteFunc: func(x any) { send(x, true) },
	})
	return inf
}

func (o *observer) typedListWatch(list func(context.Context, metav1.ListOptions) (runtime.Object, error), watchFn func(context.Context, metav1.ListOptions) (watch.Interface, error)) toolscache.ListerWatcher {
	return &toolscache.ListWatch{
		ListWithContextFunc:  list,
		WatchFuncWithContext: watchFn,
	}
}

// runtimeListWatch lists and watches Rejuv's kinds through the
// controller-runtime client, which knows their scheme.
func (o *observer) runtimeListWatch(list client.ObjectList) toolscache.ListerWatcher {
	return o.typedListWatch(func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
		l := list.DeepCopyObject().(client.ObjectList)
		return l, o.watch.List(ctx, l, &client.ListOptions{Raw: &opts})
	}, func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
		l := list.DeepCopyObject().(client.ObjectList)
		return o.watch.Watch(ctx, l, &client.ListOptions{Raw: &opts})
	})
}
