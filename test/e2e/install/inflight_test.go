package install

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// inFlight is the work TestUpgradeKeepsWorkInFlight keeps in flight
// across an upgrade, in a namespace of its own whose pods get the
// readiness gate: the Deployment web's rolling restart (policy rolling,
// one pod at a time, each held out of its Service for rollingGrace
// first), and on the pod solo a request holding it for heldGrace (first),
// one queued behind it (second) and one completed before (done).
type inFlight struct {
	ns string
	// remove deletes the namespace and waits until it is gone.
	remove func()
	// web are the Deployment's pods before the run, by name.
	web map[string]*corev1.Pod
	// soloRestarts is solo's restartCount once done has completed.
	soloRestarts int32
	// stored are objects as the previous release stored them, as read
	// through each API version before the upgrade.
	stored map[string]string
}

const (
	// rollingGrace is how long the run holds each pod out of its Service
	// before its container is stopped: the run outlasts the upgrade's
	// start.
	rollingGrace = 10
	// heldGrace is first's: the upgrade starts while it holds solo.
	heldGrace = 20
	// webPods is the Deployment's size.
	webPods = 3
)

// startWorkInFlight leaves the work in flight, and checks that it is: the
// run has pods left, first holds solo, second is queued behind it.
func startWorkInFlight(t *testing.T, c client.Client) *inFlight {
	t.Helper()
	ctx := context.Background()
	w := &inFlight{stored: map[string]string{}}
	w.ns, w.remove = testNamespace(t, c, "upgrade-", map[string]string{v1beta1.ReadinessGateNamespaceLabel: "enabled"})
	labels := map[string]string{"app": "web"}
	if err := c.Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(webPods)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: testappSpec()},
		},
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "solo"}, Spec: testappSpec()}); err != nil {
		t.Fatal(err)
	}
	poll(t, "the pods ready, with the readiness gate", 2*time.Minute, func() bool {
		ready := w.pods(t, c)
		return len(ready) == webPods+1 && allServing(ready)
	})
	w.web = w.pods(t, c)
	delete(w.web, "solo")
	for _, p := range w.web {
		if !pods.HasReadinessGate(p) {
			t.Fatalf("premise: pod %s has no readiness gate in a namespace that opts in", p.Name)
		}
	}

	done := w.request(t, c, "done", 0)
	// Completed, then retired: the manager removes the active label in a
	// write of its own after the completion, and the stored copy is read
	// once both have happened.
	w.waitRequest(t, c, done, "done to complete and lose its active label", time.Minute, func() bool {
		_, active := done.Labels[v1beta1.ActiveLabel]
		return done.Status.Phase == v1beta1.PhaseCompleted && !active
	})
	if done.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("request done: %+v, want Succeeded", done.Status)
	}
	w.soloRestarts = w.solo(t, c).Status.ContainerStatuses[0].RestartCount
	if err := c.Create(ctx, &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "idle"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}},
			Schedule: &v1alpha1.Schedule{Cron: "0 4 1 1 *"},
		},
	}); err != nil {
		t.Fatal(err)
	}
	w.store(t, c)

	first := w.request(t, c, "first", heldGrace)
	w.waitRequest(t, c, first, "first to hold solo", time.Minute, func() bool {
		return first.Status.Phase == v1beta1.PhaseRecreating && pods.OutOfServiceByGate(w.solo(t, c))
	})
	second := w.request(t, c, "second", 0)
	w.waitRequest(t, c, second, "second to be queued behind first", time.Minute, func() bool {
		return strings.Contains(second.Status.Message, "queued behind")
	})
	if err := c.Create(ctx, &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: "rolling"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector:  metav1.LabelSelector{MatchLabels: labels},
			RestartAt: &metav1.Time{Time: time.Now()},
			Rollout:   v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
			Recreate:  v1alpha1.RecreateTemplate{Strategy: &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(int64(rollingGrace))}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	// The pass creates the run's requests, then writes the policy's
	// status: the run is read once its status says it has begun.
	var run *v1alpha1.Run
	poll(t, "the run's first request and the run in the policy's status", time.Minute, func() bool {
		run = w.policy(t, c, "rolling").Status.Run
		return run != nil && len(w.runRequests(t, c)) > 0
	})

	// The premise: all of it is still under way.
	if run.State != v1alpha1.RunRunning || run.Recreated >= webPods {
		t.Fatalf("premise: the run %+v is not under way with pods left", run)
	}
	for _, r := range []*v1beta1.ContainerRecreateRequest{first, second} {
		if err := c.Get(ctx, client.ObjectKeyFromObject(r), r); err != nil {
			t.Fatal(err)
		}
	}
	if first.Status.Phase != v1beta1.PhaseRecreating || second.Status.Phase == v1beta1.PhaseCompleted || !pods.OutOfServiceByGate(w.solo(t, c)) {
		t.Fatalf("premise: first %s, second %s, solo held %t; want first holding solo, second waiting",
			first.Status.Phase, second.Status.Phase, pods.OutOfServiceByGate(w.solo(t, c)))
	}
	return w
}

// checkFinished: the run completed with each pod recreated once; first
// and second succeeded with one recreation of solo's container between
// them (second, queued behind first, takes the instance first started,
// which began after second was admitted, as Rejuv counts a recreation);
// every request ended, no pod is held, and the stored objects read back
// as they did before the upgrade.
func (w *inFlight) checkFinished(t *testing.T, c client.Client) {
	t.Helper()
	ctx := context.Background()
	first, second := &v1beta1.ContainerRecreateRequest{}, &v1beta1.ContainerRecreateRequest{}
	var run *v1alpha1.Run
	poll(t, "the run and the requests to end", 4*time.Minute, func() bool {
		run = w.policy(t, c, "rolling").Status.Run
		for name, r := range map[string]*v1beta1.ContainerRecreateRequest{"first": first, "second": second} {
			if err := c.Get(ctx, client.ObjectKey{Namespace: w.ns, Name: name}, r); err != nil {
				t.Fatal(err)
			}
		}
		return run != nil && run.State != v1alpha1.RunRunning && first.Status.Phase == v1beta1.PhaseCompleted && second.Status.Phase == v1beta1.PhaseCompleted
	})
	if run.State != v1alpha1.RunCompleted || run.Recreated != webPods {
		t.Errorf("run %+v, want Completed with %d pods recreated", run, webPods)
	}
	perPod := map[string]int{}
	for _, r := range w.runRequests(t, c) {
		if r.Annotations[v1beta1.RunAnnotation] == run.ScheduledTime.UTC().Format(time.RFC3339) {
			perPod[r.Spec.PodName]++
		}
	}
	after := w.pods(t, c)
	for name, b := range w.web {
		a := after[name]
		if a == nil || a.UID != b.UID {
			t.Errorf("pod %s was replaced", name)
			continue
		}
		if was, got := b.Status.ContainerStatuses[0].RestartCount, a.Status.ContainerStatuses[0].RestartCount; got != was+1 || perPod[name] != 1 {
			t.Errorf("pod %s: %d requests in the run, restartCount %d -> %d; want 1 and +1", name, perPod[name], was, got)
		}
	}
	for _, r := range []*v1beta1.ContainerRecreateRequest{first, second} {
		if r.Status.Result != v1beta1.ResultSucceeded {
			t.Errorf("request %s: %+v, want Succeeded", r.Name, r.Status)
		}
	}
	solo := w.solo(t, c).Status.ContainerStatuses[0]
	if solo.RestartCount != w.soloRestarts+1 {
		t.Errorf("solo: restartCount %d -> %d after first and second, want +1: one recreation for both", w.soloRestarts, solo.RestartCount)
	}
	for _, r := range []*v1beta1.ContainerRecreateRequest{first, second} {
		if s := r.Status.ContainerStatusSnapshot; len(s) != 1 || s[0].ContainerID != solo.ContainerID {
			t.Errorf("request %s reports %+v, want solo's instance %s", r.Name, s, solo.ContainerID)
		}
	}
	all := &v1beta1.ContainerRecreateRequestList{}
	if err := c.List(ctx, all, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	for _, r := range all.Items {
		if r.Status.Phase != v1beta1.PhaseCompleted {
			t.Errorf("request %s (pod %s) is %s after the upgrade: every request should have ended", r.Name, r.Spec.PodName, r.Status.Phase)
		}
	}
	poll(t, "every pod back in its Service", 30*time.Second, func() bool { return allServing(w.pods(t, c)) })
	for key, was := range w.stored {
		if now := w.read(t, c, key); now != was {
			t.Errorf("%s reads back differently after the upgrade:\nbefore %s\nafter  %s", key, was, now)
		}
	}
}

// holdForUninstall starts a request that holds solo out of its Service
// for a minute, and returns solo's restartCount.
func (w *inFlight) holdForUninstall(t *testing.T, c client.Client) int32 {
	t.Helper()
	last := w.request(t, c, "last", 60)
	w.waitRequest(t, c, last, "last to hold solo", time.Minute, func() bool {
		return last.Status.Phase == v1beta1.PhaseRecreating && pods.OutOfServiceByGate(w.solo(t, c))
	})
	return w.solo(t, c).Status.ContainerStatuses[0].RestartCount
}

// checkReleased: after the uninstall, solo is back in its Service and
// running, its container recreated at most once more.
func (w *inFlight) checkReleased(t *testing.T, c client.Client, restarts int32) {
	t.Helper()
	var solo *corev1.Pod
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		solo = w.solo(t, c)
		return pods.Ready(solo) && !pods.OutOfServiceByGate(solo), nil
	})
	if err != nil {
		t.Errorf("pod solo, which a request held when the uninstall began, is not back in its Service 30 s after it: conditions %+v", solo.Status.Conditions)
	}
	if got := solo.Status.ContainerStatuses[0].RestartCount; got > restarts+1 {
		t.Errorf("solo: restartCount %d -> %d during the uninstall", restarts, got)
	}
}

// request creates a request to recreate solo's container, with an unready
// grace of grace seconds when not 0.
func (w *inFlight) request(t *testing.T, c client.Client, name string, grace int64) *v1beta1.ContainerRecreateRequest {
	t.Helper()
	r := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: "solo", Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
	}
	if grace > 0 {
		r.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(grace)}
	}
	if err := c.Create(context.Background(), r); err != nil {
		t.Fatalf("create request %s: %v", name, err)
	}
	return r
}

// waitRequest reads r again until cond holds.
func (w *inFlight) waitRequest(t *testing.T, c client.Client, r *v1beta1.ContainerRecreateRequest, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	poll(t, what, timeout, func() bool {
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(r), r); err != nil {
			t.Fatal(err)
		}
		return cond()
	})
}

// runRequests are the requests of policy rolling.
func (w *inFlight) runRequests(t *testing.T, c client.Client) []v1beta1.ContainerRecreateRequest {
	t.Helper()
	list := &v1beta1.ContainerRecreateRequestList{}
	if err := c.List(context.Background(), list, client.InNamespace(w.ns), client.MatchingLabels{v1beta1.PolicyLabel: "rolling"}); err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func (w *inFlight) policy(t *testing.T, c client.Client, name string) *v1alpha1.RecreatePolicy {
	t.Helper()
	p := &v1alpha1.RecreatePolicy{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: name}, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *inFlight) solo(t *testing.T, c client.Client) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: "solo"}, p); err != nil {
		t.Fatal(err)
	}
	if len(p.Status.ContainerStatuses) != 1 {
		t.Fatalf("pod solo has %d container statuses, want 1", len(p.Status.ContainerStatuses))
	}
	return p
}

// pods are the namespace's pods, by name.
func (w *inFlight) pods(t *testing.T, c client.Client) map[string]*corev1.Pod {
	t.Helper()
	list := &corev1.PodList{}
	if err := c.List(context.Background(), list, client.InNamespace(w.ns)); err != nil {
		t.Fatal(err)
	}
	out := map[string]*corev1.Pod{}
	for i := range list.Items {
		if list.Items[i].DeletionTimestamp == nil {
			out[list.Items[i].Name] = &list.Items[i]
		}
	}
	return out
}

// allServing: every pod is Ready with its readiness gate's condition True.
func allServing(ps map[string]*corev1.Pod) bool {
	for _, p := range ps {
		if !pods.Ready(p) || pods.OutOfServiceByGate(p) || len(p.Status.ContainerStatuses) != 1 {
			return false
		}
	}
	return true
}

// storedObjects are the objects the upgrade must leave as they were, as
// each API version reads them: a completed request through both versions
// of apps.kruise.io, and a policy's spec and metadata.
var storedObjects = []struct {
	gvk  schema.GroupVersionKind
	name string
	// specOnly leaves the status out: the manager writes a policy's.
	specOnly bool
}{
	{schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1alpha1", Kind: "ContainerRecreateRequest"}, "done", false},
	{schema.GroupVersionKind{Group: "apps.kruise.io", Version: "v1beta1", Kind: "ContainerRecreateRequest"}, "done", false},
	{schema.GroupVersionKind{Group: "rejuv.dev", Version: "v1alpha1", Kind: "RecreatePolicy"}, "idle", true},
}

// store reads the stored objects before the upgrade.
func (w *inFlight) store(t *testing.T, c client.Client) {
	t.Helper()
	for i := range storedObjects {
		key := storedKey(i)
		w.stored[key] = w.read(t, c, key)
	}
}

func storedKey(i int) string {
	o := storedObjects[i]
	return o.gvk.Kind + " " + o.name + " as " + o.gvk.GroupVersion().String()
}

// read is the stored object key names as JSON, without what the API
// server changes on every write (managedFields, resourceVersion).
func (w *inFlight) read(t *testing.T, c client.Client, key string) string {
	t.Helper()
	for i, o := range storedObjects {
		if storedKey(i) != key {
			continue
		}
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(o.gvk)
		if err := c.Get(context.Background(), client.ObjectKey{Namespace: w.ns, Name: o.name}, u); err != nil {
			t.Fatalf("read %s: %v", key, err)
		}
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
		if o.specOnly {
			unstructured.RemoveNestedField(u.Object, "status")
		}
		data, err := json.Marshal(u.Object)
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	t.Fatalf("no stored object %s", key)
	return ""
}

// poll checks cond every 250 ms until it holds, failing the test after
// timeout.
func poll(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
