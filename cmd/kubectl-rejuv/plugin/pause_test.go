package plugin

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// pauseCluster is a cluster with Rejuv's namespace and the given requests;
// with confirming, the manager marks the emergency stop observed as soon
// as it is read after a write. It returns the command's options writing
// to out.
func pauseCluster(t *testing.T, confirming bool, objs ...client.Object) (*pauseAll, *clients, *bytes.Buffer) {
	t.Helper()
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	objs = append(objs, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: defaultRejuvNamespace}})
	funcs := interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if err := c.Get(ctx, key, obj, opts...); err != nil {
			return err
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok && confirming && cm.Name == v1alpha1.PauseConfigMap {
			if cm.Annotations == nil {
				cm.Annotations = map[string]string{}
			}
			cm.Annotations[v1alpha1.PauseObservedAnnotation] = v1alpha1.PauseDigest(cm.Data)
			return c.Update(ctx, cm)
		}
		return nil
	}}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithInterceptorFuncs(funcs).Build()
	out := &bytes.Buffer{}
	o := &Options{Streams: genericiooptions.IOStreams{Out: out, ErrOut: out}}
	return &pauseAll{o: o, all: true, rejuvNamespace: defaultRejuvNamespace, timeout: 2 * time.Second, poll: 10 * time.Millisecond}, &clients{client: c}, out
}

func stopOf(t *testing.T, c *clients) *corev1.ConfigMap {
	t.Helper()
	cm := &corev1.ConfigMap{}
	if err := c.client.Get(context.Background(), client.ObjectKey{Namespace: defaultRejuvNamespace, Name: v1alpha1.PauseConfigMap}, cm); err != nil {
		t.Fatal(err)
	}
	return cm
}

// TestPauseWritesTheStopAndSaysWhenTheManagerActsOnIt: pause --all writes
// the reason and what becomes of requests, waits for the manager's
// confirmation and says nothing is under way; a second pause replaces the
// first's reason; resume deletes it, and says so when there was none.
func TestPauseWritesTheStopAndSaysWhenTheManagerActsOnIt(t *testing.T) {
	p, c, out := pauseCluster(t, true)
	p.reason = "INC-42"
	if err := p.pause(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	cm := stopOf(t, c)
	if cm.Data[v1alpha1.PauseReasonKey] != "INC-42" || cm.Data[v1alpha1.PauseRequestsKey] != v1alpha1.PauseFinish {
		t.Errorf("data %v, want the reason and requests: finish", cm.Data)
	}
	for _, want := range []string{"new requests are refused", "the manager confirmed", "no request is under way and no pod is held: Rejuv is paused cluster-wide"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q does not say %q", out, want)
		}
	}

	p.reason, p.endRequests = "INC-43", true
	if err := p.pause(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if cm := stopOf(t, c); cm.Data[v1alpha1.PauseReasonKey] != "INC-43" || cm.Data[v1alpha1.PauseRequestsKey] != v1alpha1.PauseEnd {
		t.Errorf("data %v after a second pause, want its reason and requests: end", cm.Data)
	}

	out.Reset()
	if err := p.resume(context.Background(), c); err != nil || !strings.Contains(out.String(), "Rejuv resumed") {
		t.Errorf("resume: %v, %q", err, out)
	}
	out.Reset()
	if err := p.resume(context.Background(), c); err != nil || !strings.Contains(out.String(), "Rejuv was not paused") {
		t.Errorf("resume again: %v, %q", err, out)
	}
}

// TestPauseSaysWhatIsLeft: a request a daemon has begun that does not end
// within the timeout is counted, and the pause still holds.
func TestPauseSaysWhatIsLeft(t *testing.T) {
	busy := &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r", Labels: map[string]string{v1beta1.ActiveLabel: "true"}}}
	p, c, _ := pauseCluster(t, true, busy)
	p.timeout = 200 * time.Millisecond
	err := p.pause(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "paused, nothing new starts") || !strings.Contains(err.Error(), "after --timeout 200ms, 1 request under way (shop/r)") {
		t.Errorf("pause with a request that does not end: %v; want it to fail, saying the pause holds and naming the request", err)
	}
	stopOf(t, c) // still paused
}

// TestPauseWaitsForThePodsHeldToBeBack: with no request left, a pod the
// readiness gate still keeps out of its Services (its condition False, or
// not set yet) is waited for and named; one back in service is not.
func TestPauseWaitsForThePodsHeldToBeBack(t *testing.T) {
	gated := func(name string, conditions ...corev1.PodCondition) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name},
			Spec:       corev1.PodSpec{ReadinessGates: []corev1.PodReadinessGate{{ConditionType: v1beta1.PodReadyCondition}}},
			Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: conditions},
		}
	}
	held := gated("held", corev1.PodCondition{Type: v1beta1.PodReadyCondition, Status: corev1.ConditionFalse})
	unset := gated("unset")
	back := gated("back", corev1.PodCondition{Type: v1beta1.PodReadyCondition, Status: corev1.ConditionTrue})
	p, c, _ := pauseCluster(t, true, held, unset, back)
	p.timeout = 200 * time.Millisecond
	err := p.pause(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "2 pods held out of their Services by the readiness gate KruisePodReady (shop/held, shop/unset)") {
		t.Errorf("pause with pods held: %v; want it to fail, naming the two pods held", err)
	}
}

// TestPauseWithNoManagerToConfirmFails: the stop is written, but nothing
// confirms it: the command fails, saying what to look at.
func TestPauseWithNoManagerToConfirmFails(t *testing.T) {
	p, c, _ := pauseCluster(t, false)
	p.timeout = 100 * time.Millisecond
	err := p.pause(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "did not confirm within 100ms") || !strings.Contains(err.Error(), "kubectl get pods -n rejuv-system") {
		t.Errorf("pause with no manager: %v", err)
	}
	stopOf(t, c) // still written: new requests are refused all the same
}
