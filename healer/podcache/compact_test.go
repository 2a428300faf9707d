package podcache

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/healer/intern"
	"github.com/rejuv-dev/rejuv/test/heap"
)

// at is a time as the API's decoders give it: whole seconds, local zone.
func at(s int64) metav1.Time { return metav1.NewTime(time.Unix(1_790_000_000+s, 0).Local()) }

// containerID is a container ID as containerd writes it: 64 hex digits,
// here those of the instance's name's SHA-256.
func containerID(instance string) string {
	sum := sha256.Sum256([]byte(instance))
	return "containerd://" + hex.EncodeToString(sum[:])
}

// templatePod is a running pod of a Deployment's template, with what the
// kubelet reports of it: five conditions, two containers running (one
// restarted), an init container that ran.
func templatePod(name string, labels map[string]string) *corev1.Pod {
	started := at(100)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", UID: types.UID("uid-" + name), ResourceVersion: "1234" + name[len(name)-1:],
			GenerateName: "web-", Generation: 1, CreationTimestamp: at(0), Labels: labels,
			Annotations:     map[string]string{"kubectl.kubernetes.io/restartedAt": "2026-11-30T10:00:00Z"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-1", Controller: new(true)}}},
		Spec: corev1.PodSpec{NodeName: "node-" + name, RestartPolicy: corev1.RestartPolicyAlways, TerminationGracePeriodSeconds: ptr.To[int64](30),
			ServiceAccountName: "web", Priority: ptr.To[int32](0),
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: v1beta1.PodReadyCondition}},
			InitContainers: []corev1.Container{{Name: "init", Image: "busybox:1"}},
			Containers: []corev1.Container{{
				Name: "app", Image: "web:1", Env: []corev1.EnvVar{{Name: "POD", Value: name}},
				Ports:     []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
				Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}},
				Lifecycle: &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
			}, {Name: "sidecar", Image: "proxy:2"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSBurstable, HostIP: "10.0.0.1", PodIP: "10.1.0." + name[len(name)-1:],
			StartTime: &started, ObservedGeneration: 1,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodReadyToStartContainers, Status: corev1.ConditionTrue, LastTransitionTime: at(2)},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: at(3)},
				{Type: v1beta1.PodReadyCondition, Status: corev1.ConditionTrue, Reason: "NoContainerRecreating", LastProbeTime: at(4), LastTransitionTime: at(4)},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: at(5)},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: at(5)},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: at(1)},
			},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "init", Image: "busybox:1", ImageID: "sha256:aa", ContainerID: containerID("init-" + name),
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: at(2), FinishedAt: at(3), ContainerID: containerID("init-" + name)}}}},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", Image: "web:1", ImageID: "sha256:bb", ContainerID: containerID("app-2-" + name), Ready: true, Started: new(true), RestartCount: 1,
					State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(40)}},
					LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", StartedAt: at(4), FinishedAt: at(39), ContainerID: containerID("app-1-" + name)}}},
				{Name: "sidecar", Image: "proxy:2", ImageID: "sha256:cc", ContainerID: containerID("sidecar-" + name), Ready: true, Started: new(false),
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: at(4)}}},
			}},
	}
}

// TestACachedPodReadsBackAsTheTrimmedPod: what the cache gives back of a
// pod is exactly what pods.Trim keeps of it (what rules read as
// input.pod), for a pod as the kubelet reports it and for one with
// nothing set.
func TestACachedPodReadsBackAsTheTrimmedPod(t *testing.T) {
	s := &sharedValues{}
	// A pod evicted (a message and reason) and being deleted, its
	// containers waiting in back-off, running since a zero time, running
	// and terminated at once (as no kubelet reports, kept as it is), with
	// no state at all, and IDs packed or kept whole.
	evicted := templatePod("web-b", map[string]string{"app": "web"})
	deleting := at(50)
	evicted.DeletionTimestamp, evicted.DeletionGracePeriodSeconds = &deleting, new(int64(30))
	evicted.Status.Message, evicted.Status.Reason = "The node was low on resource: memory.", "Evicted"
	evicted.Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff", Message: "back-off 5m0s"}}
	evicted.Status.ContainerStatuses[1].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	evicted.Status.ContainerStatuses[1].LastTerminationState = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{}}
	evicted.Status.InitContainerStatuses[0].State.Running = &corev1.ContainerStateRunning{StartedAt: at(7)}
	evicted.Status.ContainerStatuses = append(evicted.Status.ContainerStatuses, corev1.ContainerStatus{Name: "new", Image: "web:1"},
		corev1.ContainerStatus{Name: "upper", ContainerID: strings.ToUpper(containerID("upper"))},
		corev1.ContainerStatus{Name: "short", ContainerID: containerID("short")[:76]},
		corev1.ContainerStatus{Name: "not-hex", ContainerID: "cri-o://" + strings.Repeat("g", 64)},
		corev1.ContainerStatus{Name: "other", ContainerID: "docker://" + strings.Repeat("a", 64)})
	for _, pod := range []*corev1.Pod{templatePod("web-a", map[string]string{"app": "web"}), evicted, {}, {Status: corev1.PodStatus{Conditions: []corev1.PodCondition{}}}} {
		want := pods.Trim(pod)
		want.TypeMeta = metav1.TypeMeta{Kind: "Pod", APIVersion: "v1"}
		got := &corev1.Pod{}
		s.compact(pod).podInto(got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("pod %q read back differs from the trimmed pod:\n got %+v\nwant %+v", pod.Name, got, want)
		}
	}
}

// TestCachedPodsOfOneTemplateShareTheirValues: the pods of one template
// hold one spec, one labels map, one owners list and one copy of each
// condition, and each keeps its own name, node, times and container IDs.
func TestCachedPodsOfOneTemplateShareTheirValues(t *testing.T) {
	s := &sharedValues{}
	a := s.compact(templatePod("web-a", map[string]string{"app": "web", "hash": "1"}))
	b := s.compact(templatePod("web-b", map[string]string{"hash": "1", "app": "web"}))
	c := s.compact(templatePod("web-c", map[string]string{"app": "web", "hash": "2"}))
	if reflect.ValueOf(a.meta.labels).UnsafePointer() != reflect.ValueOf(b.meta.labels).UnsafePointer() {
		t.Error("two pods with the same labels hold two maps")
	}
	if reflect.ValueOf(a.meta.labels).UnsafePointer() == reflect.ValueOf(c.meta.labels).UnsafePointer() || c.meta.labels["hash"] != "2" {
		t.Errorf("a pod with other labels holds another's: %v", c.meta.labels)
	}
	if a.spec != b.spec || &a.meta.owners[0] != &b.meta.owners[0] || a.status.conditions[0].fixed != b.status.conditions[0].fixed ||
		a.status.containers[0].containerImage != b.status.containers[0].containerImage {
		t.Error("two pods of one template hold two copies of their spec, owners, conditions or container images (the env that differs is not kept)")
	}
	var pa, pb corev1.Pod
	a.podInto(&pa)
	b.podInto(&pb)
	if pa.Name != "web-a" || pa.Spec.NodeName != "node-web-a" || pb.Spec.NodeName != "node-web-b" ||
		pa.Status.ContainerStatuses[0].ContainerID != containerID("app-2-web-a") || pb.Status.ContainerStatuses[0].ContainerID != containerID("app-2-web-b") {
		t.Errorf("a pod's own values were shared: %+v %+v", pa, pb)
	}
	other := &corev1.Pod{}
	other.Spec.Containers = []corev1.Container{{Name: "app", Image: "web:2"}}
	var po corev1.Pod
	s.compact(other).podInto(&po)
	if po.Spec.Containers[0].Image != "web:2" {
		t.Errorf("a pod with another image got %s", po.Spec.Containers[0].Image)
	}
}

// keptPerPod is the live heap per pod that keep holds of n pods made by
// pod.
func keptPerPod[K any](n int, pod func(int) *corev1.Pod, keep func(*corev1.Pod) K) int64 {
	kept := make([]K, 0, n)
	before := heap.Live()
	for i := range n {
		kept = append(kept, keep(pod(i)))
	}
	perPod := (heap.Live() - before) / int64(n)
	runtime.KeepAlive(kept)
	return perPod
}

// TestACachedPodCostsAFractionOfATrimmedOne measures, for 2,000 pods of
// 20 templates as the kubelet reports them, what the cache keeps per pod
// against what the trimmed corev1.Pod alone costs (what the cache kept
// before, its shared values shared the same way).
func TestACachedPodCostsAFractionOfATrimmedOne(t *testing.T) {
	const n = 2000
	pod := func(i int) *corev1.Pod {
		return templatePod(fmt.Sprintf("web-%d", i), map[string]string{"app": "web", "hash": fmt.Sprint(i % 20)})
	}
	s := &sharedValues{}
	compact := keptPerPod(n, pod, s.compact)
	trimmed := keptPerPod(n, pod, pods.Trim)
	t.Logf("per pod of two containers, an init container and six conditions: %d bytes kept, the trimmed corev1.Pod %d bytes (%.2f)",
		compact, trimmed, float64(compact)/float64(trimmed))
	if compact*2 > trimmed {
		t.Errorf("the cache keeps %d bytes a pod, the trimmed pod alone %d: want at most half", compact, trimmed)
	}
}

// hostilePod is a Pending pod as anyone who may create pods can make it:
// a distinct 250 KB annotation and a distinct 900 KB preStop command,
// 1.15 MB in all, within the API server's limits.
func hostilePod(i int) *corev1.Pod {
	pod := templatePod(fmt.Sprintf("fat-%d", i), map[string]string{"app": "fat"})
	pod.Annotations = map[string]string{"example.com/blob": fmt.Sprintf("%d", i) + strings.Repeat("a", 250_000)}
	pod.Spec.Containers[0].Lifecycle = &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{
		Exec: &corev1.ExecAction{Command: []string{"sh", "-c", fmt.Sprintf("%d", i) + strings.Repeat("b", 900_000)}},
	}}
	return pod
}

// TestTheCacheKeepsAFewKilobytesOfAPodWhateverItsAnnotationsAndPreStop
// puts pods with distinct large annotations and preStop commands through
// the cache's transform, as the cache does for every pod of the cluster,
// and measures what stays on the heap per pod: a pod of 1.15 MB must cost
// the manager a few kilobytes, not its size.
func TestTheCacheKeepsAFewKilobytesOfAPodWhateverItsAnnotationsAndPreStop(t *testing.T) {
	const n = 40
	s := &sharedValues{}
	kept := make([]*compactPod, 0, n)
	before := heap.Live()
	for i := range n {
		kept = append(kept, s.compact(hostilePod(i)))
	}
	perPod := (heap.Live() - before) / n
	t.Logf("the cache keeps %d bytes per pod of %d bytes", perPod, hostilePod(0).Size())
	if perPod > 64<<10 {
		t.Errorf("the cache keeps %d bytes per pod with a distinct 250 KB annotation and 900 KB preStop, want at most %d", perPod, 64<<10)
	}
	for i, k := range kept {
		var pod corev1.Pod
		k.podInto(&pod)
		if pod.Name != fmt.Sprintf("fat-%d", i) || pod.Spec.Containers[0].Name != "app" || pod.Labels["app"] != "fat" {
			t.Errorf("pod %d lost what Rejuv reads: %+v", i, pod.ObjectMeta)
		}
		if note := pod.Annotations[pods.TrimmedAnnotation]; !strings.Contains(note, "example.com/blob") || !strings.Contains(note, "containers: app") {
			t.Errorf("pod %d: %s is %q, want it to name the annotation and the container left out", i, pods.TrimmedAnnotation, note)
		}
	}
}

// TestPodsGoneLeaveLittleBehind: pods that each carried 16 KiB of
// distinct annotations (the most Trim keeps), put through the cache's
// transform and then dropped, as deleted pods or pods whose annotations
// changed are, leave at most what the shared values' tables may keep
// alive of them: anyone who may create pods must not grow the manager by
// creating and deleting them.
func TestPodsGoneLeaveLittleBehind(t *testing.T) {
	const n = 1000
	s := &sharedValues{}
	s.compact(templatePod("web-0", map[string]string{"app": "web"}))
	before := heap.Live()
	for i := range n {
		pod := templatePod(fmt.Sprintf("web-%d", i), map[string]string{"app": "web"})
		pod.Annotations = map[string]string{}
		for a := range 4 {
			pod.Annotations[fmt.Sprintf("example.com/note-%d", a)] = fmt.Sprint(i) + strings.Repeat("n", pods.MaxKeptAnnotationBytes-40)
		}
		if kept := s.compact(pod); len(kept.meta.annotations) != 4 {
			t.Fatalf("pod %d: %d annotations kept, want the 4 within the bounds", i, len(kept.meta.annotations))
		}
	}
	left := heap.Live() - before
	runtime.KeepAlive(s)
	t.Logf("%d pods of 16 KiB of distinct annotations gone, %d bytes left behind (the tables keep at most %d bytes of keys each)",
		n, left, intern.MaxKeyBytes)
	if left > 3*intern.MaxKeyBytes {
		t.Errorf("%d pods gone left %d bytes behind, want at most %d", n, left, 3*intern.MaxKeyBytes)
	}
}
