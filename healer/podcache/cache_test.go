package podcache

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// apiServer starts a real API server for the test, and gives its
// address and an admin client.
func apiServer(t *testing.T) (*rest.Config, client.Client) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the real API server; run without -short (make test)")
	}
	env, err := harness.Envtest(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	admin, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	return cfg, admin
}

// startedCache starts a real API server with pods web-0..web-2 in
// namespace shop (web-2 labelled app=other) and web-0 in namespace cafe,
// and the cache New makes with Configure's options, synced.
func startedCache(t *testing.T) (cache.Cache, client.Client) {
	t.Helper()
	ctx := t.Context()
	cfg, admin := apiServer(t)
	for _, ns := range []string{"shop", "cafe"} {
		if err := admin.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct{ ns, name, app string }{{"shop", "web-0", "web"}, {"shop", "web-1", "web"}, {"shop", "web-2", "other"}, {"cafe", "web-0", "web"}} {
		pod := templatePod(p.name, map[string]string{"app": p.app})
		pod.Namespace = p.ns
		pod.UID, pod.ResourceVersion, pod.OwnerReferences, pod.Spec.NodeName = "", "", nil, ""
		status := pod.Status
		if err := admin.Create(ctx, pod); err != nil {
			t.Fatalf("create pod %s/%s: %v", p.ns, p.name, err)
		}
		pod.Status = status
		if err := admin.Status().Update(ctx, pod); err != nil {
			t.Fatalf("write the status of pod %s/%s: %v", p.ns, p.name, err)
		}
	}
	opts := cache.Options{Scheme: clientgoscheme.Scheme}
	Configure(&opts)
	c, err := New(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}
	return c, admin
}

// TestTheCacheGivesBackPodsAsTheAPIServerHasThem: Get and List give back
// each pod as the API server has it, trimmed, by namespace, labels and
// limit; a pod it does not hold is NotFound; changing what a read gave
// back changes nothing in the cache.
func TestTheCacheGivesBackPodsAsTheAPIServerHasThem(t *testing.T) {
	c, admin := startedCache(t)
	ctx := t.Context()

	live := &corev1.Pod{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web-1"}, live); err != nil {
		t.Fatal(err)
	}
	want := pods.Trim(live)
	want.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
	got := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web-1"}, got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the cache's pod differs from the API server's, trimmed:\n got %+v\nwant %+v", got, want)
	}
	if len(got.Status.Conditions) != 6 || len(got.Status.ContainerStatuses) != 2 || got.Status.ContainerStatuses[0].LastTerminationState.Terminated == nil {
		t.Fatalf("premise: the pod's status was not written as the kubelet would: %+v", got.Status)
	}

	got.Labels["app"] = "changed"
	got.Status.Conditions[0].Status = corev1.ConditionFalse
	got.Status.ContainerStatuses[0].State.Running.StartedAt = metav1.Now()
	again := &corev1.Pod{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "web-1"}, again); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, want) {
		t.Errorf("changing a pod Get gave back changed the cache:\n got %+v\nwant %+v", again, want)
	}

	err := c.Get(ctx, client.ObjectKey{Namespace: "shop", Name: "gone"}, &corev1.Pod{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Get of a pod the cache does not hold: %v, want NotFound", err)
	}

	names := func(opts ...client.ListOption) []string {
		t.Helper()
		list := &corev1.PodList{}
		if err := c.List(ctx, list, opts...); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range list.Items {
			out = append(out, p.Namespace+"/"+p.Name)
		}
		return out
	}
	count := func(got []string) map[string]int {
		m := map[string]int{}
		for _, n := range got {
			m[n]++
		}
		return m
	}
	for _, tc := range []struct {
		what string
		opts []client.ListOption
		want []string
	}{
		{"all", nil, []string{"shop/web-0", "shop/web-1", "shop/web-2", "cafe/web-0"}},
		{"namespace shop", []client.ListOption{client.InNamespace("shop")}, []string{"shop/web-0", "shop/web-1", "shop/web-2"}},
		{"app=web in shop", []client.ListOption{client.InNamespace("shop"), client.MatchingLabels{"app": "web"}}, []string{"shop/web-0", "shop/web-1"}},
		{"app!=web", []client.ListOption{client.MatchingLabelsSelector{Selector: labels.SelectorFromSet(labels.Set{"app": "other"})}}, []string{"shop/web-2"}},
		{"namespace cafe, unsafe", []client.ListOption{client.InNamespace("cafe"), client.UnsafeDisableDeepCopy}, []string{"cafe/web-0"}},
	} {
		if got := names(tc.opts...); !reflect.DeepEqual(count(got), count(tc.want)) {
			t.Errorf("List %s: %v, want %v", tc.what, got, tc.want)
		}
	}
	if got := names(client.InNamespace("shop"), client.Limit(2)); len(got) != 2 {
		t.Errorf("List with limit 2: %v", got)
	}
	if err := c.List(ctx, &corev1.PodList{}, client.MatchingFields{"spec.nodeName": "n"}); err == nil {
		t.Error("List by a field the cache has no index for: no error")
	}
}

// TestThePodInformersHandlersAreGivenPods: the handlers of the pod
// informer (the controllers' watches) are given pods, as the API server
// has them, trimmed: when added, changed and deleted.
func TestThePodInformersHandlersAreGivenPods(t *testing.T) {
	c, admin := startedCache(t)
	ctx := t.Context()
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []string
	note := func(what string, obj any) {
		mu.Lock()
		defer mu.Unlock()
		if gone, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = gone.Obj
		}
		pod, ok := obj.(*corev1.Pod)
		if !ok {
			seen = append(seen, what+" a "+reflect.TypeOf(obj).String())
			return
		}
		seen = append(seen, what+" "+pod.Namespace+"/"+pod.Name+" app="+pod.Labels["app"]+" "+pod.Spec.Containers[0].Name)
	}
	if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { note("add", obj) },
		UpdateFunc: func(_, obj any) { note("update", obj) },
		DeleteFunc: func(obj any) { note("delete", obj) },
	}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{}
	if err := admin.Get(ctx, client.ObjectKey{Namespace: "cafe", Name: "web-0"}, pod); err != nil {
		t.Fatal(err)
	}
	pod.Labels["app"] = "relabelled"
	if err := admin.Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if err := admin.Delete(ctx, pod, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	want := []string{"update cafe/web-0 app=relabelled app", "delete cafe/web-0 app=relabelled app"}
	has := func() bool {
		mu.Lock()
		defer mu.Unlock()
		adds, found := 0, map[string]bool{}
		for _, s := range seen {
			if strings.HasPrefix(s, "add ") {
				adds++
			}
			found[s] = true
		}
		return adds == 4 && found[want[0]] && found[want[1]]
	}
	if err := wait.PollUntilContextTimeout(ctx, 20*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) { return has(), nil }); err != nil {
		mu.Lock()
		defer mu.Unlock()
		t.Errorf("the handler saw %q; want four pods added, then %q", seen, want)
	}
}
