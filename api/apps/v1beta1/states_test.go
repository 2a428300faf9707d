package v1beta1

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestStatesKeepTheRecordedOnesInTheSpecsOrder: one state per container
// of the spec, in its order; a recorded state is kept whatever its place
// in the status, a container without one is Pending, and a state for a
// container the spec does not name is dropped.
func TestStatesKeepTheRecordedOnesInTheSpecsOrder(t *testing.T) {
	r := &ContainerRecreateRequest{
		Spec: ContainerRecreateRequestSpec{Containers: []ContainerRecreateRequestContainer{{Name: "app"}, {Name: "proxy"}, {Name: "log"}}},
		Status: ContainerRecreateRequestStatus{ContainerRecreateStates: []ContainerRecreateRequestContainerRecreateState{
			{Name: "log", Phase: PhaseSucceeded},
			{Name: "app", Phase: PhaseRecreating, IsKilled: true, Message: "stopped"},
			{Name: "gone", Phase: PhaseFailed},
		}},
	}
	want := []ContainerRecreateRequestContainerRecreateState{
		{Name: "app", Phase: PhaseRecreating, IsKilled: true, Message: "stopped"},
		{Name: "proxy", Phase: PhasePending},
		{Name: "log", Phase: PhaseSucceeded},
	}
	if got := r.States(); !reflect.DeepEqual(got, want) {
		t.Errorf("States() = %+v, want %+v", got, want)
	}
	if !r.AnyKilled() {
		t.Error("AnyKilled() = false with app stopped")
	}
}

// TestFailUnfinishedLeavesTheFinishedAlone: the containers not done with
// fail with the reason; those that succeeded or failed keep their state.
func TestFailUnfinishedLeavesTheFinishedAlone(t *testing.T) {
	st := &ContainerRecreateRequestStatus{ContainerRecreateStates: []ContainerRecreateRequestContainerRecreateState{
		{Name: "a", Phase: PhaseSucceeded},
		{Name: "b", Phase: PhaseFailed, Message: "its own"},
		{Name: "c", Phase: PhaseRecreating},
		{Name: "d", Phase: PhasePending},
	}}
	if st.AllFinished() {
		t.Fatal("AllFinished() with c and d under way")
	}
	st.FailUnfinished("not recreated: b failed")
	want := []ContainerRecreateRequestContainerRecreateState{
		{Name: "a", Phase: PhaseSucceeded},
		{Name: "b", Phase: PhaseFailed, Message: "its own"},
		{Name: "c", Phase: PhaseFailed, Message: "not recreated: b failed"},
		{Name: "d", Phase: PhaseFailed, Message: "not recreated: b failed"},
	}
	if !reflect.DeepEqual(st.ContainerRecreateStates, want) || !st.AllFinished() {
		t.Errorf("after FailUnfinished: %+v (all finished %t), want %+v", st.ContainerRecreateStates, st.AllFinished(), want)
	}
	if got := ResultOf(st.ContainerRecreateStates); got != ResultPartiallySucceeded {
		t.Errorf("ResultOf = %s, want PartiallySucceeded", got)
	}
}

// TestEffectiveStrategyOfARequestWithoutOne: the zero strategy, not a nil
// dereference.
func TestEffectiveStrategyOfARequestWithoutOne(t *testing.T) {
	if got := (&ContainerRecreateRequest{}).EffectiveStrategy(); !reflect.DeepEqual(got, ContainerRecreateRequestStrategy{}) {
		t.Errorf("EffectiveStrategy() = %+v, want the zero strategy", got)
	}
	force := &ContainerRecreateRequestStrategy{ForceRecreate: true}
	if got := (&ContainerRecreateRequest{Spec: ContainerRecreateRequestSpec{Strategy: force}}).EffectiveStrategy(); !got.ForceRecreate {
		t.Errorf("EffectiveStrategy() = %+v, want the request's", got)
	}
}

type recorded struct {
	regarding, related runtime.Object
	note               string
}

type eventLog []recorded

func (l *eventLog) Eventf(regarding, related runtime.Object, _, _, action, note string, _ ...any) {
	if action != EventAction {
		panic("action " + action)
	}
	*l = append(*l, recorded{regarding, related, note})
}

// TestRecordOnBoth: the event goes on the request and on the pod, each
// naming the other; with the pod gone, on the request alone, naming no
// pod (a nil *Pod would be a non-nil interface).
func TestRecordOnBoth(t *testing.T) {
	crr := &ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Name: "r"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web"}}
	var l eventLog
	RecordOnBoth(&l, crr, pod, Event{Type: corev1.EventTypeNormal, Reason: "Completed", Note: "done"})
	if len(l) != 2 || l[0].regarding != crr || l[0].related != pod || l[1].regarding != pod || l[1].related != crr {
		t.Fatalf("events %+v, want one on the request and one on the pod", l)
	}
	l = nil
	RecordOnBoth(&l, crr, nil, Event{Type: corev1.EventTypeWarning, Reason: "Completed", Note: "pod gone"})
	if len(l) != 1 || l[0].regarding != crr || l[0].related != nil {
		t.Fatalf("events %+v, want one on the request, naming no pod", l)
	}
}

// TestMayHoldUnready: a request asking for an unready grace may hold its
// pod until it completes or is being deleted; one without a grace never.
func TestMayHoldUnready(t *testing.T) {
	grace := int64(5)
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		r    ContainerRecreateRequest
		want bool
	}{
		{"no strategy", ContainerRecreateRequest{}, false},
		{"no grace", ContainerRecreateRequest{Spec: ContainerRecreateRequestSpec{Strategy: &ContainerRecreateRequestStrategy{}}}, false},
		{"a grace, pending", ContainerRecreateRequest{Spec: ContainerRecreateRequestSpec{Strategy: &ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: &grace}}}, true},
		{"a grace, recreating", ContainerRecreateRequest{Spec: ContainerRecreateRequestSpec{Strategy: &ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: &grace}},
			Status: ContainerRecreateRequestStatus{Phase: PhaseRecreating}}, true},
		{"a grace, completed", ContainerRecreateRequest{Spec: ContainerRecreateRequestSpec{Strategy: &ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: &grace}},
			Status: ContainerRecreateRequestStatus{Phase: PhaseCompleted}}, false},
		{"a grace, being deleted", ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{DeletionTimestamp: &now},
			Spec: ContainerRecreateRequestSpec{Strategy: &ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: &grace}}}, false},
	} {
		if got := tc.r.MayHoldUnready(); got != tc.want {
			t.Errorf("%s: MayHoldUnready() = %t, want %t", tc.name, got, tc.want)
		}
	}
}
