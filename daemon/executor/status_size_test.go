package executor

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestTheLargestStatusFitsItsShare: the status of a request at its
// largest (the most containers a request may name, with the longest names,
// each held in the kubelet's back-off for a pod whose name and namespace
// are as long as they may be, each with its preStop's start and its new
// instance in the snapshot, a message and a condition) fits the share of
// v1beta1.MaxRequestBytes that the webhook leaves to the status, less 1
// KiB for the managed fields of the status's two writers.
func TestTheLargestStatusFitsItsShare(t *testing.T) {
	now := metav1.NewTime(time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC))
	st := v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhaseCompleted, CompletionTime: &now, Result: v1beta1.ResultPartiallySucceeded,
		Message: "the node node-a has been NotReady or gone for longer than 1m0s (--node-lost-grace); the request cannot be carried out"}
	kubelet := fmt.Sprintf("back-off 5m0s restarting failed container=%s pod=%s_%s(%s)",
		strings.Repeat("c", 63), strings.Repeat("p", 253), strings.Repeat("n", 63), "12345678-1234-1234-1234-123456789012")
	for i := range v1beta1.MaxRequestContainers {
		name := fmt.Sprintf("%s%02d", strings.Repeat("c", 61), i)
		st.ContainerRecreateStates = append(st.ContainerRecreateStates, v1beta1.ContainerRecreateRequestContainerRecreateState{
			Name: name, Phase: v1beta1.PhaseRecreating, IsKilled: true, PreStopStartedAt: &now, Message: v1beta1.BackOffMessage + kubelet})
		st.ContainerStatusSnapshot = append(st.ContainerStatusSnapshot, v1beta1.ContainerRecreateRequestSyncContainerStatus{
			Name: name, Ready: true, RestartCount: 1 << 30, ContainerID: "containerd://" + strings.Repeat("f", 64)})
	}
	st.Conditions = []metav1.Condition{{Type: v1beta1.ConditionPreRecreateGrace, Status: metav1.ConditionTrue, Reason: "UnreadyAcquired",
		Message: "the pod's KruisePodReady condition was set False; the daemon waits for the kubelet to report the pod not ready, then the grace", LastTransitionTime: now}}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	snapshot, err := json.Marshal(st.ContainerStatusSnapshot)
	if err != nil {
		t.Fatal(err)
	}
	share := v1beta1.MaxRequestBytes - v1beta1.MaxAdmittedRequestBytes - 1<<10
	t.Logf("the largest status: %d bytes (its snapshot %d), of the %d left to it", len(b), len(snapshot), share)
	if len(b) > share {
		t.Errorf("the largest status takes %d bytes, more than the %d the request's bound leaves it", len(b), share)
	}
}
