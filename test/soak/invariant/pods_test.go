package invariant

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

func TestObserveFindsRestartsOfEveryKindOfContainer(t *testing.T) {
	obj := newPod("web-0")
	obj.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "proxy", ContainerID: containerID("web-0", "proxy", 0)}}
	p := &pod{uid: obj.UID, namespace: ns, name: obj.Name, instances: map[string]*instance{}}
	if got := p.observe(obj.DeepCopy(), at(0)); len(got) != 0 {
		t.Fatalf("first sight: %d restarts, want none", len(got))
	}
	obj.Status.InitContainerStatuses[0].ContainerID = containerID("web-0", "proxy", 1)
	obj.Status.InitContainerStatuses[0].RestartCount = 1
	restartContainer(obj, "app")
	got := p.observe(obj.DeepCopy(), at(1))
	if len(got) != 2 || got[0].container != "proxy" || got[1].container != "app" || got[1].oldCount != 0 || got[1].newCount != 1 {
		t.Fatalf("restarts %+v, want proxy then app, each once", got)
	}
	if got := p.observe(obj.DeepCopy(), at(2)); len(got) != 0 {
		t.Errorf("the same state again: %d restarts, want none", len(got))
	}
}

func TestReadyAroundAllowsTheSkew(t *testing.T) {
	obj := newPod("web-0")
	p := &pod{uid: obj.UID, namespace: ns, name: obj.Name, instances: map[string]*instance{}}
	setReady(obj, false)
	p.observe(obj.DeepCopy(), at(0))
	if p.readyAround(at(0), time.Second) {
		t.Error("a pod never seen Ready is Ready")
	}
	setReady(obj, true)
	p.observe(obj.DeepCopy(), at(5))
	// Taken out of service by its gate (a request the soak has not seen
	// yet): Ready as far as another watch may know, for the skew.
	setInService(obj, false)
	setReady(obj, false)
	p.observe(obj.DeepCopy(), at(10))
	cases := []struct {
		at   float64
		want bool
	}{{10.5, true}, {11, true}, {11.5, false}}
	for _, tc := range cases {
		if got := p.readyAround(at(tc.at), time.Second); got != tc.want {
			t.Errorf("at +%.1fs: ready %t, want %t", tc.at, got, tc.want)
		}
	}
	// Unready with its gate True (its node's kubelet silent): not Ready
	// from that moment, whatever the watches' order.
	setInService(obj, true)
	setReady(obj, true)
	p.observe(obj.DeepCopy(), at(20))
	setReady(obj, false)
	p.observe(obj.DeepCopy(), at(30))
	if p.readyAround(at(30.5), time.Second) {
		t.Error("a pod unready with its gate True is taken as Ready within the skew")
	}
}
