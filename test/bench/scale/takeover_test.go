package scale

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// coldList is what a standby that did not cache the pods would do at
// takeover before its first pass: list every pod of the cluster as the
// manager's cache lists them.
type coldList struct {
	took time.Duration
	pods int
}

// measureColdList lists every pod of the cluster in pages of
// pods.ListPageSize, protobuf-encoded, each pod trimmed as its page
// arrives (pods.ListInPages), as a replica's cache does when it starts:
// what the failover would take longer, at the least, were the standby to
// read pods live instead of caching them.
func measureColdList(ctx context.Context) (coldList, error) {
	cfg, err := cluster.RESTConfig()
	if err != nil {
		return coldList{}, err
	}
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return coldList{}, fmt.Errorf("cold list: client: %w", err)
	}
	lw := &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			return kube.CoreV1().Pods(metav1.NamespaceAll).List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return kube.CoreV1().Pods(metav1.NamespaceAll).Watch(ctx, o)
		},
	}
	paged := pods.ListInPages(lw, pods.TrimObject)
	start := time.Now()
	list, err := paged.(toolscache.ListerWithContext).ListWithContext(ctx, metav1.ListOptions{})
	took := time.Since(start)
	if err != nil {
		return coldList{}, fmt.Errorf("cold list: list the pods: %w", err)
	}
	return coldList{took: took, pods: meta.LenList(list)}, nil
}
