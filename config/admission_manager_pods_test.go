package config

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authentication/user"
)

// runningPod is pod shop/web, Ready, as its status is before a write.
func runningPod(t *testing.T) *corev1.Pod {
	t.Helper()
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: "KruisePodReady"}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.7",
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReady, Status: corev1.ConditionTrue},
				{Type: "KruisePodReady", Status: corev1.ConditionTrue, Reason: "Released"},
			},
			ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Ready: true, ContainerID: "containerd://1"}},
		},
	}
}

func podObject(t *testing.T, pod *corev1.Pod) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(pod)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// TestTheManagerChangesOnlyTheReadinessGateOfAPod: the manager's token
// may patch every pod's status for the readiness gate; the shipped policy
// lets it change the KruisePodReady condition and nothing else (labels,
// annotations, owners, finalizers, other conditions, phase, container
// statuses), while the kubelet and other users are not its concern.
func TestTheManagerChangesOnlyTheReadinessGateOfAPod(t *testing.T) {
	p := shippedPolicies(t)["manager-pod-status"]
	if p == nil {
		t.Fatal("config/admission has no policy manager-pod-status")
	}
	if ref := p.binding.Spec.ParamRef; ref == nil || ref.Name != managerAccount.Name || ref.Namespace != managerAccount.Namespace {
		t.Errorf("binding's paramRef %+v, want the manager's ServiceAccount", ref)
	}
	manager := serviceAccount("system", "healer", "")
	kubelet := &user.DefaultInfo{Name: "system:node:node-a", Groups: []string{"system:nodes", "system:authenticated"}}
	const refusal = "Rejuv's manager (healer of namespace system) may change only the KruisePodReady condition of pod shop/web"
	for _, tt := range []struct {
		name   string
		user   user.Info
		change func(*corev1.Pod)
		want   string
	}{
		{"the manager takes the pod out", manager, func(p *corev1.Pod) {
			p.Status.Conditions[1] = corev1.PodCondition{Type: "KruisePodReady", Status: corev1.ConditionFalse, Reason: "Recreating"}
		}, ""},
		{"the manager gives a new pod the condition", manager, func(p *corev1.Pod) {
			p.Status.Conditions = append(p.Status.Conditions[:1], corev1.PodCondition{Type: "KruisePodReady", Status: corev1.ConditionTrue})
		}, ""},
		{"the manager relabels the pod", manager, func(p *corev1.Pod) { p.Labels["app"] = "other" }, refusal + ", not its labels"},
		{"the manager annotates the pod", manager, func(p *corev1.Pod) { p.Annotations = map[string]string{"x": "y"} }, refusal + ", not its labels"},
		{"the manager adds a finalizer", manager, func(p *corev1.Pod) { p.Finalizers = []string{"x/y"} }, refusal + ", not its labels"},
		{"the manager sets Ready", manager, func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse }, refusal + ", not the rest of its status"},
		{"the manager fails the pod", manager, func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }, refusal + ", not the rest of its status"},
		{"the manager rewrites a container's status", manager, func(p *corev1.Pod) { p.Status.ContainerStatuses[0].Ready = false }, refusal + ", not the rest of its status"},
		{"the manager moves the pod's address", manager, func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.8" }, refusal + ", not the rest of its status"},
		{"the kubelet writes the status", kubelet, func(p *corev1.Pod) {
			p.Status.Phase = corev1.PodFailed
			p.Status.Conditions[0].Status = corev1.ConditionFalse
		}, ""},
		{"another service account writes the status", serviceAccount("shop", "ci", ""), func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }, ""},
	} {
		old := runningPod(t)
		updated := old.DeepCopy()
		tt.change(updated)
		got := judge(t, p, write{operation: admission.Update, subresource: "status", object: podObject(t, updated), old: podObject(t, old), user: tt.user}, managerAccount)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
