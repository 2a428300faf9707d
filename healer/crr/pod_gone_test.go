package crr

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestCompletionAfterThePodIsGoneIsRecorded: a request that completes
// after its pod was deleted (a Deployment scaled to 0, a pod deleted in
// flight) is retired as any other: its events on the request and its
// completion metrics. The recorder is client-go's, which builds a
// reference to every related object it is given.
func TestCompletionAfterThePodIsGoneIsRecorded(t *testing.T) {
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	const ns, why = "pod-gone", "pod web was deleted before its containers were recreated"
	done := metav1.Now()
	crr := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "r", UID: "uid-r", CreationTimestamp: metav1.NewTime(done.Add(-3 * time.Second)),
			Labels: map[string]string{v1beta1.PodUIDLabel: "uid-web", v1beta1.NodeNameLabel: "n", v1beta1.ActiveLabel: "true"}},
		Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web", Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
		Status: v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhaseCompleted, CompletionTime: &done, Message: why, Result: v1beta1.ResultFailed,
			ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseFailed, Message: "not recreated: " + why}}},
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(crr).WithStatusSubresource(crr).Build()
	recorded := &eventLog{}
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{})
	defer broadcaster.Shutdown()
	stop, err := broadcaster.StartEventWatcher(recorded.add)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	r := &Reconciler{Client: c, Recorder: broadcaster.NewRecorder(scheme, "rejuv-healer")}
	r.setDefaults()
	durations := sampleCount(t, crrDuration.WithLabelValues(v1beta1.SourceManual, string(v1beta1.ResultFailed)))

	if err := reconcileOnce(r, client.ObjectKeyFromObject(crr)); err != nil {
		t.Fatal(err)
	}
	got := &v1beta1.ContainerRecreateRequest{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(crr), got); err != nil {
		t.Fatal(err)
	}
	if _, active := got.Labels[v1beta1.ActiveLabel]; active {
		t.Error("the request still has its active label")
	}
	if n := testutil.ToFloat64(crrCompleted.WithLabelValues(ns, v1beta1.SourceManual, string(v1beta1.ResultFailed))); n != 1 {
		t.Errorf("rejuv_crr_completed_total{namespace=%q,result=Failed} = %v, want 1", ns, n)
	}
	if n := sampleCount(t, crrDuration.WithLabelValues(v1beta1.SourceManual, string(v1beta1.ResultFailed))) - durations; n != 1 {
		t.Errorf("rejuv_crr_duration_seconds observed %d durations, want 1", n)
	}
	for _, want := range []string{
		"ContainerRecreateRequest Warning ContainerRecreate: container app: Failed: not recreated: " + why,
		"ContainerRecreateRequest Warning RecreateCompleted: completed: Failed: " + why,
	} {
		recorded.wait(t, want)
	}
	if pods := recorded.about("Pod "); len(pods) > 0 {
		t.Errorf("events on a pod that is gone: %q", pods)
	}
}

// reconcileOnce runs one pass and turns a panic into an error, so that a
// test says what panicked instead of ending the package's run.
func reconcileOnce(r *Reconciler, key client.ObjectKey) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("reconcile %s panicked: %v", key, p)
		}
	}()
	_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: key})
	return err
}

// eventLog keeps "Kind Type Reason: note" of each event recorded.
type eventLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *eventLog) add(o runtime.Object) {
	e, ok := o.(*eventsv1.Event)
	if !ok {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf("%s %s %s: %s", e.Regarding.Kind, e.Type, e.Reason, e.Note))
}

func (l *eventLog) about(prefix string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.HasPrefix(line, prefix) {
			out = append(out, line)
		}
	}
	return out
}

// wait waits for an event the recorder hands over in the background.
func (l *eventLog) wait(t *testing.T, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 10*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return slices.Contains(l.about(""), want), nil
	})
	if err != nil {
		t.Errorf("no event %q; recorded: %q", want, l.about(""))
	}
}

// sampleCount is how many values a histogram's series has observed.
func sampleCount(t *testing.T, o prometheus.Observer) uint64 {
	t.Helper()
	m := &dto.Metric{}
	if err := o.(prometheus.Metric).Write(m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}
