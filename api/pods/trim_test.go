package pods

import (
	"fmt"
	"reflect"
	"strings"
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

func TestTrimLeavesOutAnnotationsAndLifecyclesPastTheirBoundsAndSaysSo(t *testing.T) {
	big := strings.Repeat("x", MaxKeptAnnotationBytes)
	hugeStop := &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Exec: &corev1.ExecAction{Command: []string{"sh", "-c", strings.Repeat("y", MaxLifecycleBytes)}}}}
	many := map[string]string{"rejuv.dev/tier": "web", "z/big": big}
	for i := range 8 {
		// 8 of 2 KiB: the first 7 fit in MaxKeptAnnotationsBytes with the tier.
		many[fmt.Sprintf("m/%d", i)] = strings.Repeat("v", 2<<10)
	}
	tests := []struct {
		name          string
		annotations   map[string]string
		lifecycle     *corev1.Lifecycle
		kept, dropped []string
		note          []string
	}{
		{name: "within the bounds", annotations: map[string]string{"rejuv.dev/tier": "web"}, lifecycle: fullPod().Spec.Containers[0].Lifecycle, kept: []string{"rejuv.dev/tier"}},
		{name: "one annotation too large", annotations: map[string]string{"rejuv.dev/tier": "web", "z/big": big}, kept: []string{"rejuv.dev/tier"}, dropped: []string{"z/big"},
			note: []string{"annotations over 4096 bytes, or past 16384 in all, left out: z/big"}},
		{name: "past the total", annotations: many, kept: []string{"m/0", "m/6", "rejuv.dev/tier"}, dropped: []string{"m/7", "z/big"},
			note: []string{"left out: m/7, z/big"}},
		{name: "lifecycle too large", annotations: map[string]string{"rejuv.dev/tier": "web"}, lifecycle: hugeStop, kept: []string{"rejuv.dev/tier"},
			note: []string{"lifecycle over 4096 bytes left out of containers: app"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pod := fullPod()
			pod.Annotations = tt.annotations
			pod.Spec.Containers[0].Lifecycle = tt.lifecycle
			got := Trim(pod)
			for _, k := range tt.kept {
				if got.Annotations[k] != tt.annotations[k] {
					t.Errorf("annotation %s not kept", k)
				}
			}
			for _, k := range tt.dropped {
				if _, ok := got.Annotations[k]; ok {
					t.Errorf("annotation %s kept past the bounds", k)
				}
			}
			note, trimmed := got.Annotations[TrimmedAnnotation]
			if trimmed != (len(tt.note) > 0) || Trimmed(got) != trimmed {
				t.Errorf("%s = %q (set: %v), want it set: %v", TrimmedAnnotation, note, trimmed, len(tt.note) > 0)
			}
			for _, want := range tt.note {
				if !strings.Contains(note, want) {
					t.Errorf("%s = %q, want it to say %q", TrimmedAnnotation, note, want)
				}
			}
			if wantLifecycle := tt.lifecycle != hugeStop; (got.Spec.Containers[0].Lifecycle != nil) != (wantLifecycle && tt.lifecycle != nil) {
				t.Errorf("lifecycle kept: %v, want %v", got.Spec.Containers[0].Lifecycle != nil, wantLifecycle)
			}
			if again := Trim(got); !reflect.DeepEqual(again, got) {
				t.Errorf("trimming a trimmed pod changed it:\n%+v\n%+v", again.Annotations, got.Annotations)
			}
			if _, ok := pod.Annotations[TrimmedAnnotation]; ok {
				t.Error("Trim changed the annotations of the pod it was given")
			}
		})
	}
}

// A pod may carry thousands of annotations: the note that names those
// left out stays within its own bound and counts the ones it cannot list.
func TestTrimmedNoteStaysWithinItsBound(t *testing.T) {
	pod := fullPod()
	pod.Annotations = map[string]string{}
	for i := range 2000 {
		pod.Annotations[fmt.Sprintf("example.com/%04d-%s", i, strings.Repeat("k", 40))] = strings.Repeat("v", 100)
	}
	note := Trim(pod).Annotations[TrimmedAnnotation]
	if len(note) > maxTrimmedNote || !strings.Contains(note, " more") {
		t.Errorf("note of %d bytes (bound %d), want the names it cannot list counted: %q", len(note), maxTrimmedNote, note)
	}
}

// TestTrimObjectTrimsPodsAndLeavesTheRest: as a cache's transform, a pod
// comes out as Trim gives it and any other object untouched.
func TestTrimObjectTrimsPodsAndLeavesTheRest(t *testing.T) {
	got, err := TrimObject(fullPod())
	if err != nil || !reflect.DeepEqual(got, Trim(fullPod())) {
		t.Errorf("TrimObject(pod) = %+v, %v; want Trim's pod", got, err)
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kubelet"}}}}
	if got, err := TrimObject(node); err != nil || got != node || node.ManagedFields == nil {
		t.Errorf("TrimObject(node) = %v, %v; want the node untouched", got, err)
	}
}
