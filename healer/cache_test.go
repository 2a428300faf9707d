package healer

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/pods"
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

func templatePod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID(name), Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1", UID: "rs-1"}}},
		Spec: corev1.PodSpec{NodeName: "node-1", Containers: []corev1.Container{{
			Name: "app", Image: "web:1", Env: []corev1.EnvVar{{Name: "POD", Value: name}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
		}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "web:1", ContainerID: "containerd://" + name}}},
	}
}

func TestCachedPodsOfOneTemplateShareTheirValues(t *testing.T) {
	s := &sharedValues{}
	trim := func(p *corev1.Pod) *corev1.Pod {
		obj, err := s.trimPod(p)
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*corev1.Pod)
	}
	a := trim(templatePod("web-a", map[string]string{"app": "web", "hash": "1"}))
	b := trim(templatePod("web-b", map[string]string{"hash": "1", "app": "web"}))
	c := trim(templatePod("web-c", map[string]string{"app": "web", "hash": "2"}))
	if reflect.ValueOf(a.Labels).UnsafePointer() != reflect.ValueOf(b.Labels).UnsafePointer() {
		t.Error("two pods with the same labels hold two maps")
	}
	if reflect.ValueOf(a.Labels).UnsafePointer() == reflect.ValueOf(c.Labels).UnsafePointer() || c.Labels["hash"] != "2" {
		t.Errorf("a pod with other labels holds another's: %v", c.Labels)
	}
	if &a.Spec.Containers[0] != &b.Spec.Containers[0] || &a.OwnerReferences[0] != &b.OwnerReferences[0] {
		t.Error("two pods of one template hold two copies of their containers or owners (the env that differs is not kept)")
	}
	if a.Name != "web-a" || a.Status.ContainerStatuses[0].ContainerID != "containerd://web-a" || b.Status.ContainerStatuses[0].ContainerID != "containerd://web-b" {
		t.Errorf("a pod's own values were shared: %+v %+v", a, b)
	}
	want := pods.Trim(templatePod("web-b", map[string]string{"app": "web", "hash": "1"}))
	if !reflect.DeepEqual(b, want) {
		t.Errorf("the cached pod differs from the trimmed one:\n%+v\n%+v", b, want)
	}
	other := &corev1.Pod{}
	other.Spec.Containers = []corev1.Container{{Name: "app", Image: "web:2"}}
	if got := trim(other); got.Spec.Containers[0].Image != "web:2" {
		t.Errorf("a pod with another image got %s", got.Spec.Containers[0].Image)
	}
}
