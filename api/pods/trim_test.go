package pods

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func fullPod() *corev1.Pod {
	grace := int64(45)
	always := corev1.ContainerRestartPolicyAlways
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Namespace: "shop", UID: "u1", ResourceVersion: "7", Labels: map[string]string{"app": "web"},
			Annotations:     map[string]string{"rejuv.dev/tier": "web"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "web-1"}},
			ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kubelet", FieldsV1: metav1.NewFieldsV1(`{"f:status":{}}`)}},
		},
		Spec: corev1.PodSpec{
			NodeName: "node-1", TerminationGracePeriodSeconds: &grace,
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: v1beta1.PodReadyCondition}},
			Volumes:        []corev1.Volume{{Name: "cache"}},
			InitContainers: []corev1.Container{{Name: "proxy", Image: "proxy:1", RestartPolicy: &always, Env: []corev1.EnvVar{{Name: "X", Value: "1"}}}},
			Containers: []corev1.Container{{
				Name: "app", Image: "web:1", Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
				Env:       []corev1.EnvVar{{Name: "LOG", Value: "info"}}, Args: []string{"--serve"},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Port: intstr.FromInt32(8080)}}},
				VolumeMounts:   []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}},
			}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}, {Type: v1beta1.PodReadyCondition, Status: corev1.ConditionFalse}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "app", Ready: true, RestartCount: 2, ContainerID: "containerd://a", ImageID: "web@sha256:1",
				State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{}},
				VolumeMounts: []corev1.VolumeMountStatus{{Name: "cache", MountPath: "/cache"}},
			}},
		},
	}
}

func TestTrimKeepsWhatRejuvReadsAndDropsTheRest(t *testing.T) {
	pod := fullPod()
	got := Trim(pod)
	if got.Name != "web-0" || got.UID != "u1" || got.ResourceVersion != "7" || got.Labels["app"] != "web" || got.Annotations["rejuv.dev/tier"] != "web" || len(got.OwnerReferences) != 1 {
		t.Errorf("metadata not kept: %+v", got.ObjectMeta)
	}
	if got.Spec.NodeName != "node-1" || *got.Spec.TerminationGracePeriodSeconds != 45 || !HasReadinessGate(got) {
		t.Errorf("spec not kept: %+v", got.Spec)
	}
	app := got.Spec.Containers[0]
	if app.Name != "app" || app.Image != "web:1" || len(app.Ports) != 1 || app.Lifecycle.PreStop.Sleep == nil || app.Resources.Limits.Memory().String() != "1Gi" {
		t.Errorf("container not kept: %+v", app)
	}
	if !IsSidecar(&got.Spec.InitContainers[0]) {
		t.Error("the init container's restart policy was dropped")
	}
	if st := ContainerStatus(got, "app"); st == nil || !st.Ready || st.RestartCount != 2 || st.ContainerID != "containerd://a" || st.State.Running == nil {
		t.Errorf("container status not kept: %+v", st)
	}
	if c := Condition(got, v1beta1.PodReadyCondition); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("conditions not kept: %+v", got.Status.Conditions)
	}
	if got.ManagedFields != nil || got.Spec.Volumes != nil || app.Env != nil || app.Args != nil || app.ReadinessProbe != nil || app.VolumeMounts != nil ||
		got.Spec.InitContainers[0].Env != nil || got.Status.ContainerStatuses[0].ImageID != "" || got.Status.ContainerStatuses[0].VolumeMounts != nil {
		t.Errorf("trimmed pod keeps fields Rejuv does not read: %+v", got)
	}
	if !reflect.DeepEqual(pod, fullPod()) {
		t.Error("Trim changed the pod it was given")
	}
	if again := Trim(got); !reflect.DeepEqual(again, got) {
		t.Errorf("trimming a trimmed pod changed it:\n%+v\n%+v", again, got)
	}
}

// The decoder appends conditions one by one: a pod's five sit in room for
// eight. The cache keeps a slice of their number.
func TestTrimKeepsNoRoomBeyondTheConditions(t *testing.T) {
	pod := fullPod()
	decoded := append([]corev1.PodCondition(nil), pod.Status.Conditions...)
	decoded = append(decoded, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue})
	pod.Status.Conditions = decoded
	if cap(decoded) == len(decoded) {
		t.Fatalf("premise: the decoded conditions have no spare room (%d of %d)", len(decoded), cap(decoded))
	}
	got := Trim(pod).Status.Conditions
	if !reflect.DeepEqual(got, decoded) || cap(got) != len(got) {
		t.Errorf("trimmed conditions %+v (room for %d), want %+v in room for %d", got, cap(got), decoded, len(decoded))
	}
}
