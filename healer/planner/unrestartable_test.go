package planner

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// TestRunLeavesAloneContainersTheKubeletWouldNotRestart: a run recreates
// the containers the kubelet would start again and leaves the others
// alone, each with a message naming the pod's field that decides: a pod
// whose own restartPolicy is Never, a container whose own restartPolicy
// is Never beside one that is restarted, and a pod the policy names none
// of the containers of.
func TestRunLeavesAloneContainersTheKubeletWouldNotRestart(t *testing.T) {
	at := time.Date(2026, 11, 26, 3, 0, 0, 0, time.UTC)
	run := Trigger{Kind: TriggerSchedule, Run: at, Requested: true}
	started := at.Add(-time.Hour)

	plain := policytest.RunningPod("plain", 0, "p1", started)
	never := policytest.RunningPod("never", 0, "n1", started)
	never.Spec.RestartPolicy = corev1.RestartPolicyNever
	mixed := policytest.RunningPod("mixed", 0, "m1", started)
	mixed.Spec.Containers = append(mixed.Spec.Containers, corev1.Container{Name: "web"})
	mixed.Spec.Containers[0].RestartPolicy = new(corev1.ContainerRestartPolicyNever)
	other := policytest.RunningPod("other", 0, "o1", started)
	other.Spec.Containers[0].Name = "db"
	pods := []*corev1.Pod{plain, never, mixed, other}

	p := Progress(run, pods, policyspec.Containers{"app", "web"}, map[types.UID]*appsv1beta1.ContainerRecreateRequest{}, nil, nil)
	var pending []string
	for _, c := range p.Pending {
		pending = append(pending, c.Pod.Name+":"+strings.Join(c.Containers, ","))
	}
	if want := []string{"plain:app", "mixed:web"}; !slices.Equal(pending, want) {
		t.Errorf("pending %v, want %v", pending, want)
	}
	if len(p.Skipped) != 2 || p.Skipped[0] != never || p.Skipped[1] != other {
		t.Errorf("skipped %d pods, want never and other", len(p.Skipped))
	}
	want := map[string]struct {
		containers []string
		message    string
	}{
		"never": {[]string{"app"}, "spec.restartPolicy is Never: the kubelet would not start container app again once stopped"},
		"mixed": {[]string{"app"}, "spec.containers[0].restartPolicy is Never: the kubelet would not start container app again once stopped"},
		"other": {nil, "the policy's containers name none of the pod's containers and native sidecars"},
	}
	if len(p.LeftAlone) != len(want) {
		t.Errorf("%d pods with containers left alone, want %d", len(p.LeftAlone), len(want))
	}
	for _, c := range p.LeftAlone {
		w, ok := want[c.Pod.Name]
		if !ok {
			t.Errorf("pod %s: containers %v left alone", c.Pod.Name, c.Containers)
			continue
		}
		if msg := UnrestartableMessage(c.Pod, c.Containers); !slices.Equal(c.Containers, w.containers) || msg != w.message {
			t.Errorf("pod %s: left alone %v: %q; want %v: %q", c.Pod.Name, c.Containers, msg, w.containers, w.message)
		}
		if c.Trigger != run || c.Reason != run.RunReason() {
			t.Errorf("pod %s: trigger %v, reason %q; want the run's, so that its follower tells the decision as the run's", c.Pod.Name, c.Trigger, c.Reason)
		}
	}
}
