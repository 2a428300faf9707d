package healer

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTrimNodeKeepsItsIdentityAndReadyCondition(t *testing.T) {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "u", ResourceVersion: "9", Labels: map[string]string{"zone": "a"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionFalse, Reason: "KubeletNotReady"}},
			Images:     []corev1.ContainerImage{{Names: []string{"registry.example/app:1"}, SizeBytes: 1 << 20}},
		},
	}
	obj, err := trimNode(node)
	if err != nil {
		t.Fatal(err)
	}
	got := obj.(*corev1.Node)
	if got.Name != "node-1" || got.UID != "u" || got.ResourceVersion != "9" || got.Labels["zone"] != "a" {
		t.Errorf("identity not kept: %+v", got.ObjectMeta)
	}
	if cs := got.Status.Conditions; len(cs) != 1 || cs[0].Type != corev1.NodeReady || cs[0].Status != corev1.ConditionFalse || cs[0].Reason != "KubeletNotReady" {
		t.Errorf("conditions %+v, want the Ready one alone", cs)
	}
	if got.ManagedFields != nil || got.Status.Images != nil {
		t.Errorf("trimmed node keeps more: %+v", got)
	}
	pod := &corev1.Pod{}
	if obj, err := trimNode(pod); err != nil || obj != pod {
		t.Errorf("a pod came out as %v, %v", obj, err)
	}
}
