package pods

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
)

// pagingServer serves n pods in pages as the API server does: at most
// Limit a page, a continue token while pods remain, every page at the
// resourceVersion of the list's start. expire continue tokens fail with
// 410 Expired.
type pagingServer struct {
	n, expire int
	asked     []metav1.ListOptions
	largest   int
}

func (s *pagingServer) list(_ context.Context, o metav1.ListOptions) (runtime.Object, error) {
	s.asked = append(s.asked, o)
	start := 0
	if o.Continue != "" {
		if s.expire > 0 {
			s.expire--
			return nil, apierrors.NewResourceExpired("the continue token has expired")
		}
		start, _ = strconv.Atoi(o.Continue)
	}
	end := min(s.n, start+int(o.Limit))
	if o.Limit == 0 {
		end = s.n
	}
	list := &corev1.PodList{ListMeta: metav1.ListMeta{ResourceVersion: "42"}}
	for i := start; i < end; i++ {
		list.Items = append(list.Items, corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", i), Namespace: "shop"}})
	}
	s.largest = max(s.largest, len(list.Items))
	if end < s.n {
		list.Continue = strconv.Itoa(end)
		remaining := int64(s.n - end)
		list.RemainingItemCount = &remaining
	}
	return list, nil
}

func TestListInPagesListsEveryPodTransformedAPageAtATime(t *testing.T) {
	mark := func(o any) (any, error) {
		pod := o.(*corev1.Pod).DeepCopy()
		pod.Labels = map[string]string{"transformed": "yes"}
		return pod, nil
	}
	for _, tc := range []struct {
		name          string
		n, expire     int
		wantErr       bool
		wantListCalls int
	}{
		{name: "no pods", n: 0, wantListCalls: 1},
		{name: "one page", n: ListPageSize, wantListCalls: 1},
		{name: "several pages", n: 3*ListPageSize + 1, wantListCalls: 4},
		{name: "a continue token expires once", n: 2 * ListPageSize, expire: 1, wantListCalls: 2 + 2},
		{name: "continue tokens keep expiring", n: 2 * ListPageSize, expire: listAttempts, wantErr: true, wantListCalls: 2 * listAttempts},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &pagingServer{n: tc.n, expire: tc.expire}
			lw := cache.ToListerWatcherWithContext(ListInPages(&cache.ListWatch{ListWithContextFunc: s.list}, mark))
			// As the reflector asks: from its watch cache, in pages of 500.
			obj, err := lw.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "0", Limit: 500, LabelSelector: "app=web", FieldSelector: "spec.nodeName=node-1"})
			if len(s.asked) != tc.wantListCalls {
				t.Errorf("asked the API server %d times, want %d", len(s.asked), tc.wantListCalls)
			}
			for _, o := range s.asked {
				if o.Limit != ListPageSize || o.ResourceVersion != "" || o.ResourceVersionMatch != "" || o.LabelSelector != "app=web" || o.FieldSelector != "spec.nodeName=node-1" {
					t.Errorf("asked the API server %+v, want pages of %d of the most recent pods with the caller's selectors", o, ListPageSize)
				}
			}
			if tc.wantErr {
				if !apierrors.IsResourceExpired(err) {
					t.Errorf("got %v, want the expired continue token's error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			list := obj.(*corev1.PodList)
			if len(list.Items) != tc.n || list.ResourceVersion != "42" || list.Continue != "" || list.RemainingItemCount != nil {
				t.Fatalf("got %d pods at resourceVersion %q, continue %q, remaining %v; want %d at 42 and nothing remaining",
					len(list.Items), list.ResourceVersion, list.Continue, list.RemainingItemCount, tc.n)
			}
			for i, pod := range list.Items {
				if pod.Name != fmt.Sprintf("pod-%d", i) || pod.Labels["transformed"] != "yes" {
					t.Errorf("pod %d is %s with labels %v, want pod-%d transformed", i, pod.Name, pod.Labels, i)
				}
			}
			if s.largest > ListPageSize {
				t.Errorf("a page held %d pods, want at most %d", s.largest, ListPageSize)
			}
		})
	}
}

func TestListInPagesSaysWhichPodItCouldNotTransform(t *testing.T) {
	s := &pagingServer{n: 3}
	lw := cache.ToListerWatcherWithContext(ListInPages(&cache.ListWatch{ListWithContextFunc: s.list}, func(any) (any, error) { return nil, fmt.Errorf("no") }))
	if _, err := lw.ListWithContext(t.Context(), metav1.ListOptions{}); err == nil || err.Error() != "list pods: transform pod shop/pod-0: no" {
		t.Errorf("got %v, want an error naming pod shop/pod-0", err)
	}
}
