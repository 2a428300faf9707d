package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestEditorCannotForgeARequestsStatus is issue 26's reproduction: a user
// with the edit role, who may patch requests but not write their status,
// annotates a request waiting out its unready grace with
// rejuv.dev/prestop-started of 2000, which v1alpha1 reads as
// preStopStartedAt. That once became the stored status, and the daemon
// skipped the preStop hook and stopped the container with no grace. The
// v1alpha1 write is refused; written in v1beta1 the annotation is an
// ordinary one, which a later v1alpha1 write does not turn into status.
// The hook runs, and the stop has the pod's grace.
func TestEditorCannotForgeARequestsStatus(t *testing.T) {
	t.Parallel()
	c := rejuvStack(t).Client
	ctx := context.Background()
	ns := gatedNamespace(t, c)
	asEditor(t, ns)
	editor := impersonate(t, editorUser, []string{"system:authenticated"}, "")

	const grace = 20
	spec := controlledPod("web")
	spec.Spec.TerminationGracePeriodSeconds = ptr.To[int64](grace)
	spec.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sh", "-c", "date +%s > /ctl/prestop"}},
	}}
	before := createPod(t, ns, spec)
	crr := newRequest(ns, "forged", before.Name, "app")
	crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](10)}
	created := time.Now()
	if err := eventually(func() error { return editor.Create(ctx, crr.DeepCopy()) }); err != nil {
		t.Fatalf("the editor creates a request: %v", err)
	}
	// Premise: the daemon has taken the request up (its containers have a
	// state, which the forged annotation is read into) and waits out the
	// unready grace, before the hook.
	waitFor(t, "the request taken up, the pod NotReady for the grace", func() bool {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil || len(cur.Status.ContainerRecreateStates) != 1 {
			return false
		}
		p, err := kube.CoreV1().Pods(ns).Get(ctx, before.Name, metav1.GetOptions{})
		return err == nil && !podReady(true)(p)
	})
	checkNotForged := func(what string) {
		t.Helper()
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := c.Get(ctx, client.ObjectKeyFromObject(crr), cur); err != nil {
			t.Fatal(err)
		}
		for _, s := range cur.Status.ContainerRecreateStates {
			if s.PreStopStartedAt != nil && s.PreStopStartedAt.Before(&metav1.Time{Time: created.Add(-time.Minute)}) {
				t.Fatalf("after %s, the stored preStopStartedAt of %s is %s: the status was forged", what, s.Name, s.PreStopStartedAt.UTC())
			}
		}
	}

	forged := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"annotations":{"rejuv.dev/prestop-started":"{\"app\":\"2000-01-01T00:00:00Z\"}"}}}`))
	alpha := &v1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: crr.Name}}
	want := editorUser + " may not change rejuv.dev/prestop-started of v1alpha1 ContainerRecreateRequest " + ns + "/forged: in v1alpha1 these annotations carry the request's status"
	if err := editor.Patch(ctx, alpha.DeepCopy(), forged); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("the editor annotates the request in v1alpha1: %v, want Forbidden with %q", err, want)
	}
	checkNotForged("the v1alpha1 annotation")
	if err := editor.Patch(ctx, &v1beta1.ContainerRecreateRequest{ObjectMeta: alpha.ObjectMeta}, forged); err != nil {
		t.Errorf("the editor annotates the request in v1beta1, where the annotation is an ordinary one: %v", err)
	}
	if err := editor.Patch(ctx, alpha.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"team":"shop"}}}`))); err != nil {
		t.Errorf("the editor labels the request in v1alpha1: %v", err)
	}
	checkNotForged("the v1beta1 annotation and a v1alpha1 write")

	got, _ := waitCompleted(t, c, crr, 90*time.Second)
	if got.Status.Result != v1beta1.ResultSucceeded {
		t.Fatalf("result %q: %s %+v", got.Status.Result, got.Status.Message, got.Status.ContainerRecreateStates)
	}
	checkNotForged("the request completed")
	if ran := strings.TrimSpace(execIn(t, ns, before.Name, "side", "cat", "/ctl/prestop")); ran == "" {
		t.Error("the preStop hook did not run")
	}
	if left := stoppingGrace(t, ns, before.Name, "app"); left < (grace-5)*time.Second {
		t.Errorf("the container was stopped with a grace of %s, want about the pod's %ds less the hook's time", left, grace)
	}
}

// stoppingGrace is the grace the daemon gave the container's stop, from
// its StoppingContainer event ("container app (grace 19s)").
func stoppingGrace(t *testing.T, ns, pod, container string) time.Duration {
	t.Helper()
	events, err := kube.EventsV1().Events(ns).List(context.Background(), metav1.ListOptions{FieldSelector: "regarding.name=" + pod})
	if err != nil {
		t.Fatal(err)
	}
	note := regexp.MustCompile(`^container ` + regexp.QuoteMeta(container) + ` \(grace (\S+)\)`)
	for _, e := range events.Items {
		if e.Regarding.Kind != "Pod" || e.Reason != "StoppingContainer" {
			continue
		}
		if m := note.FindStringSubmatch(e.Note); m != nil {
			d, err := time.ParseDuration(m[1])
			if err != nil {
				t.Fatalf("StoppingContainer event %q: %v", e.Note, err)
			}
			return d
		}
	}
	t.Fatalf("no StoppingContainer event for container %s of pod %s/%s", container, ns, pod)
	return 0
}
