package deploy

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// TestPanicsAreFoundInALog: a panic controller-runtime recovered (client-go
// logs "Observed a panic", the reconciler's error says "panic:") and a
// crash are found, with the lines that follow; ordinary lines are not.
func TestPanicsAreFoundInALog(t *testing.T) {
	log := strings.Join([]string{
		`{"level":"info","msg":"starting manager"}`,
		`{"level":"error","msg":"Observed a panic","controller":"containerrecreaterequest","panic":"runtime error: invalid memory address or nil pointer dereference"}`,
		`{"level":"error","msg":"Reconciler error","error":"panic: runtime error: invalid memory address or nil pointer dereference [recovered]"}`,
		`{"level":"info","msg":"stopping container","container":"app"}`,
	}, "\n")
	found := panicsIn(log)
	if len(found) != 2 || !strings.Contains(found[0][0], "Observed a panic") || !strings.Contains(found[1][0], "Reconciler error") {
		t.Errorf("found %q; want the recovered panic and the reconciler's error", found)
	}
	crash := "panic: assignment to entry in nil map\n\ngoroutine 7 [running]:\nmain.main()"
	if found := panicsIn(crash); len(found) != 1 || len(found[0]) != 4 {
		t.Errorf("found %q; want the crash with its stack", found)
	}
	if found := panicsIn(`{"msg":"the pod is being deleted; leaving its containers to the kubelet"}`); len(found) != 0 {
		t.Errorf("found %q in a log without a panic", found)
	}
}

// TestOnlyRestartsNoTestAskedForAreFound: restarts are allowed per pod UID
// and container, so a new pod of the same name, or another container,
// does not inherit a disturbance's allowance.
func TestOnlyRestartsNoTestAskedForAreFound(t *testing.T) {
	pod := func(name, uid string, restarts int32) corev1.Pod {
		return corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + uid)},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{{Name: "manager", RestartCount: restarts,
				LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 1}}}}}}
	}
	pods := []corev1.Pod{pod("rejuv-healer-a", "a", 1), pod("rejuv-healer-b", "b", 2), pod("rejuv-healer-c", "c", 0)}
	// A test restarted the API server while a and an earlier pod named b
	// ran; each restarted once then.
	allowed := map[string]int32{"uid-a/manager": 1, "uid-old-b/manager": 1}
	found := unexpectedRestarts(pods, allowed)
	if len(found) != 1 || found[0].Pod != "rejuv-healer-b" || !strings.Contains(found[0].What, "restarted 2 time(s) that no test asked for (restartCount 2; last: Error, exit code 1)") {
		t.Errorf("found %+v; want rejuv-healer-b's two restarts only", found)
	}
}
