package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os/exec"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// load is what the soak's users do meanwhile, each at random moments:
// make pods unready for the stuck-readiness rule, request recreations by
// hand and with kubectl rejuv restart, and scale, delete and evict pods.
type load struct {
	client     client.Client
	kube       kubernetes.Interface
	plugin     string // the kubectl-rejuv binary
	kubeconfig string
	log        func(format string, args ...any)

	mu       sync.Mutex
	counts   map[string]int
	handMade int
	// wedged is the stuck app's pod the load made unready last and its
	// container's instance (containerID), until a new one replaces it or
	// the pod goes; zero for none.
	wedged wedge
}

// A wedge is a pod made unready, by UID, and its container's instance.
type wedge struct {
	pod         types.UID
	containerID string
}

// callTimeout bounds each call the load makes: the API server may be
// down or slow on purpose.
const callTimeout = 20 * time.Second

func (l *load) count(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[what]++
}

// every calls act at random moments, between lo and hi apart, until
// deadline.
func every(ctx context.Context, r *rand.Rand, lo, hi time.Duration, deadline time.Time, act func(context.Context, *rand.Rand)) {
	for {
		wait := between(r, lo, hi)
		if time.Now().Add(wait).After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		call, cancel := context.WithTimeout(ctx, callTimeout)
		act(call, r)
		cancel()
	}
}

// run starts each actor with its own random source drawn from r and
// waits until they have all stopped at deadline.
func (l *load) run(ctx context.Context, r *rand.Rand, deadline time.Time) {
	actors := []struct {
		lo, hi time.Duration
		act    func(context.Context, *rand.Rand)
	}{
		{15 * time.Second, 30 * time.Second, l.makeUnready},
		{10 * time.Second, 25 * time.Second, l.requestByHand},
		{2 * time.Minute, 4 * time.Minute, l.restartWithPlugin},
		{10 * time.Second, 20 * time.Second, l.churn},
	}
	var all sync.WaitGroup
	for _, a := range actors {
		seed := r.Uint64()
		all.Go(func() { every(ctx, rand.New(rand.NewPCG(seed, 1)), a.lo, a.hi, deadline, a.act) })
	}
	all.Wait()
}

// readyPod is a Ready, running pod labelled app=name in ns, chosen at
// random; nil when there is none.
func (l *load) readyPod(ctx context.Context, r *rand.Rand, ns, name string) *corev1.Pod {
	list, err := l.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		return nil
	}
	var ready []*corev1.Pod
	for i := range list.Items {
		if p := &list.Items[i]; podReady(p) {
			ready = append(ready, p)
		}
	}
	if len(ready) == 0 {
		return nil
	}
	return ready[r.IntN(len(ready))]
}

// calmPod is one of the pods labelled app=name in ns, chosen at random,
// when every one of them is Ready and none has a request under way: a
// careful operator touches one pod at a time, and a wedged app seldom
// wedges twice at once. nil otherwise: the load then leaves the app
// alone this time, so that what it does with faults on top (a node lost,
// its pods taken out of their Services) never empties a Service by
// itself.
func (l *load) calmPod(ctx context.Context, r *rand.Rand, ns, name string) *corev1.Pod {
	list, err := l.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil || len(list.Items) == 0 {
		return nil
	}
	for i := range list.Items {
		if !podReady(&list.Items[i]) {
			return nil
		}
	}
	requests := &v1beta1.ContainerRecreateRequestList{}
	if err := l.client.List(ctx, requests, client.InNamespace(ns)); err != nil {
		return nil
	}
	for _, q := range requests.Items {
		if q.Status.Phase != v1beta1.PhaseCompleted {
			return nil
		}
	}
	return &list.Items[r.IntN(len(list.Items))]
}

// podReady says whether p is Ready with an address, and staying.
func podReady(p *corev1.Pod) bool {
	return pods.Ready(p) && p.DeletionTimestamp == nil && p.Status.PodIP != ""
}

// makeUnready has one of the rules app's pods stop answering its
// readiness probe, as a wedged app would; stuck-readiness recreates it.
// One at a time: not while the instance wedged before is still there,
// whatever the pods' Ready conditions say (a paused kubelet reports none:
// seed 12 wedged three of four pods under two paused kubelets, past the
// policy's blast radius, and the policy, halted, rightly healed none).
func (l *load) makeUnready(ctx context.Context, r *rand.Rand) {
	ns := namespacePrefix + "rules"
	if l.stillWedged(ctx, ns) {
		return
	}
	p := l.calmPod(ctx, r, ns, "stuck")
	if p == nil {
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("http://%s:8080/control?ready=false", p.Status.PodIP), nil)
	if err != nil {
		return
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		l.log("load: make %s/%s unready: %v", p.Namespace, p.Name, err)
		return
	}
	_ = resp.Body.Close()
	l.log("load: %s/%s made unready", p.Namespace, p.Name)
	l.count("pods made unready")
	if s := pods.ContainerStatus(p, "app"); s != nil {
		l.mu.Lock()
		l.wedged = wedge{pod: p.UID, containerID: s.ContainerID}
		l.mu.Unlock()
	}
}

// stillWedged says whether the instance the load made unready last is
// still its pod's: the pod is there with the same containerID (or cannot
// be read). It forgets the wedge once the pod is gone or has a new
// instance.
func (l *load) stillWedged(ctx context.Context, ns string) bool {
	l.mu.Lock()
	w := l.wedged
	l.mu.Unlock()
	if w == (wedge{}) {
		return false
	}
	list, err := l.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=stuck"})
	if err != nil {
		return true
	}
	for i := range list.Items {
		if list.Items[i].UID != w.pod {
			continue
		}
		if s := pods.ContainerStatus(&list.Items[i], "app"); s != nil && s.ContainerID == w.containerID {
			return true
		}
	}
	l.mu.Lock()
	if l.wedged == w {
		l.wedged = wedge{}
	}
	l.mu.Unlock()
	return false
}

// requestByHand creates a request for one of the hand app's pods as an
// operator would: by turns with the API, taking the pod out of its
// Services for 3 seconds first as kubectl-kruise's default does, and with
// kubectl rejuv create crr, which sets the same.
func (l *load) requestByHand(ctx context.Context, r *rand.Rand) {
	ns := namespacePrefix + "hand"
	p := l.calmPod(ctx, r, ns, "web")
	if p == nil {
		return
	}
	l.mu.Lock()
	l.handMade++
	n := l.handMade
	l.mu.Unlock()
	name := fmt.Sprintf("by-hand-%d", n)
	if n%2 == 0 {
		out, err := exec.CommandContext(ctx, l.plugin, "--kubeconfig", l.kubeconfig, "-n", ns, "create", "crr", name, "--pod="+p.Name, "--containers=app").CombinedOutput()
		if err != nil {
			l.log("load: kubectl rejuv create crr %s --pod=%s refused: %v: %s", name, p.Name, err, out)
			l.count("requests by hand refused")
			return
		}
		l.log("load: kubectl rejuv create crr %s/%s --pod=%s", ns, name, p.Name)
		l.count("requests by hand")
		return
	}
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1beta1.ContainerRecreateRequestSpec{
			PodName:                 p.Name,
			Containers:              []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}},
			Strategy:                &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(int64(3))},
			ActiveDeadlineSeconds:   new(int64(120)),
			TTLSecondsAfterFinished: new(int32(60)),
		},
	}
	if err := l.client.Create(ctx, crr); err != nil {
		l.log("load: request %s/%s by hand for pod %s refused: %v", ns, name, p.Name, err)
		l.count("requests by hand refused")
		return
	}
	l.log("load: request %s/%s by hand for pod %s", ns, name, p.Name)
	l.count("requests by hand")
}

// restartWithPlugin restarts the hand app with kubectl rejuv restart,
// without waiting: the run goes on on the server.
func (l *load) restartWithPlugin(ctx context.Context, _ *rand.Rand) {
	out, err := exec.CommandContext(ctx, l.plugin, "--kubeconfig", l.kubeconfig, "-n", namespacePrefix+"hand", "restart", "deployment/web").CombinedOutput()
	if err != nil {
		l.log("load: kubectl rejuv restart: %v: %s", err, out)
		l.count("kubectl rejuv restarts refused")
		return
	}
	l.log("load: kubectl rejuv restart deployment/web: %s", out)
	l.count("kubectl rejuv restarts")
}

// churn scales the churn app between 3 and 6 pods, deletes one of its
// pods or evicts one through the eviction API, which its budget may
// refuse.
func (l *load) churn(ctx context.Context, r *rand.Rand) {
	ns := namespacePrefix + "churn"
	switch r.IntN(3) {
	case 0:
		n := int32(3 + r.IntN(4))
		if err := scaleTo(ctx, l.kube, ns, "web", n); err != nil {
			l.log("load: scale %s/web to %d: %v", ns, n, err)
			return
		}
		l.log("load: scaled %s/web to %d", ns, n)
		l.count("scaled")
	case 1:
		p := l.readyPod(ctx, r, ns, "web")
		if p == nil {
			return
		}
		if err := l.kube.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			l.log("load: delete %s/%s: %v", ns, p.Name, err)
			return
		}
		l.log("load: deleted %s/%s", ns, p.Name)
		l.count("pods deleted")
	default:
		p := l.readyPod(ctx, r, ns, "web")
		if p == nil {
			return
		}
		err := l.kube.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: p.Name}})
		if err != nil {
			l.log("load: evict %s/%s: %v", ns, p.Name, err)
			l.count("evictions refused")
			return
		}
		l.log("load: evicted %s/%s", ns, p.Name)
		l.count("pods evicted")
	}
}

// scaleTo sets a Deployment's replicas through its scale subresource.
func scaleTo(ctx context.Context, kube kubernetes.Interface, ns, name string, replicas int32) error {
	s, err := kube.AppsV1().Deployments(ns).GetScale(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	s.Spec.Replicas = replicas
	_, err = kube.AppsV1().Deployments(ns).UpdateScale(ctx, name, s, metav1.UpdateOptions{})
	return err
}
