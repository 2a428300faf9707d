package policytest

import (
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// Pod returns the i-th pod of a realistic fleet seen at now: a web
// container with probes and limits, a sidecar proxy, an init container,
// volumes, owner references, managed fields and a full status. Every
// seventh pod's app container is not ready, every eleventh restarted.
func Pod(i int, now time.Time) *corev1.Pod {
	started := now.Add(-time.Duration(i%240+1) * time.Hour)
	name := fmt.Sprintf("web-%05d", i)
	ready := i%7 != 0
	restarts := int32(0)
	if i%11 == 0 {
		restarts = 3
	}
	app := corev1.Container{
		Name:  "app",
		Image: "registry.example/shop/web:1.42.0",
		Args:  []string{"--listen=:8080", "--log-level=info"},
		Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
		Env: []corev1.EnvVar{
			{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			{Name: "GOMAXPROCS", Value: "2"},
		},
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("256Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
		},
		ReadinessProbe:           &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("http")}}, PeriodSeconds: 5},
		LivenessProbe:            &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}, PeriodSeconds: 10, FailureThreshold: 3},
		VolumeMounts:             []corev1.VolumeMount{{Name: "cache", MountPath: "/cache"}, {Name: "kube-api-access", MountPath: "/var/run/secrets/kubernetes.io/serviceaccount", ReadOnly: true}},
		TerminationMessagePath:   "/dev/termination-log",
		TerminationMessagePolicy: corev1.TerminationMessageReadFile,
		ImagePullPolicy:          corev1.PullIfNotPresent,
	}
	proxy := corev1.Container{
		Name:          "proxy",
		Image:         "registry.example/mesh/proxy:2.3.1",
		RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
		Resources: corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
		},
	}
	setup := corev1.Container{Name: "setup", Image: "registry.example/shop/migrate:1.42.0", Command: []string{"/migrate", "--check"}}
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "shop",
			UID:               types.UID(fmt.Sprintf("3f1c2a4e-0000-4000-8000-%012d", i)),
			ResourceVersion:   fmt.Sprint(100000 + i),
			CreationTimestamp: metav1.NewTime(started.Add(-time.Minute)),
			GenerateName:      "web-7d9f8c6b5-",
			Labels:            map[string]string{"app": "web", "pod-template-hash": "7d9f8c6b5", "tier": "frontend"},
			Annotations:       map[string]string{"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7d9f8c6b5", UID: "9d2b1c3a-1111-4000-8000-000000000001", Controller: new(true), BlockOwnerDeletion: new(true)}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:app":{}}}}`)},
				{Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", Subresource: "status", FieldsV1: metav1.NewFieldsV1(`{"f:status":{"f:conditions":{}}}`)},
			},
		},
		Spec: corev1.PodSpec{
			InitContainers:                []corev1.Container{setup, proxy},
			Containers:                    []corev1.Container{app},
			RestartPolicy:                 corev1.RestartPolicyAlways,
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            "web",
			NodeName:                      fmt.Sprintf("node-%03d", i%100),
			SecurityContext:               &corev1.PodSecurityContext{RunAsNonRoot: new(true), FSGroup: ptr.To[int64](2000)},
			SchedulerName:                 corev1.DefaultSchedulerName,
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
			},
			Volumes: []corev1.Volume{
				{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: new(resource.MustParse("1Gi"))}}},
				{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					DefaultMode: ptr.To[int32](420),
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptr.To[int64](3607)}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
					},
				}}},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(started)},
				{Type: corev1.PodReady, Status: condition(ready), LastTransitionTime: metav1.NewTime(started.Add(5 * time.Second))},
				{Type: corev1.ContainersReady, Status: condition(ready), LastTransitionTime: metav1.NewTime(started.Add(5 * time.Second))},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.NewTime(started.Add(-time.Minute))},
			},
			HostIP:    fmt.Sprintf("10.0.%d.%d", i/250%250, i%250+1),
			PodIP:     fmt.Sprintf("10.244.%d.%d", i/250%250, i%250+1),
			PodIPs:    []corev1.PodIP{{IP: fmt.Sprintf("10.244.%d.%d", i/250%250, i%250+1)}},
			StartTime: new(metav1.NewTime(started.Add(-time.Minute))),
			QOSClass:  corev1.PodQOSBurstable,
			InitContainerStatuses: []corev1.ContainerStatus{
				{Name: "setup", Image: setup.Image, ImageID: "registry.example/shop/migrate@sha256:" + fmt.Sprintf("%064d", 1), ContainerID: fmt.Sprintf("containerd://%064x", 3*i+1),
					State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: metav1.NewTime(started.Add(-50 * time.Second)), FinishedAt: metav1.NewTime(started.Add(-40 * time.Second))}}},
				{Name: "proxy", Image: proxy.Image, ImageID: "registry.example/mesh/proxy@sha256:" + fmt.Sprintf("%064d", 2), ContainerID: fmt.Sprintf("containerd://%064x", 3*i+2), Ready: true, Started: new(true),
					State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started.Add(-30 * time.Second))}}},
			},
			ContainerStatuses: []corev1.ContainerStatus{
				{Name: "app", Image: app.Image, ImageID: "registry.example/shop/web@sha256:" + fmt.Sprintf("%064d", 3), ContainerID: fmt.Sprintf("containerd://%064x", 3*i+3),
					Ready: ready, Started: new(true), RestartCount: restarts,
					State:                corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}},
					LastTerminationState: lastTermination(restarts, started)},
			},
		},
	}
}

func condition(ok bool) corev1.ConditionStatus {
	if ok {
		return corev1.ConditionTrue
	}
	return corev1.ConditionFalse
}

func lastTermination(restarts int32, started time.Time) corev1.ContainerState {
	if restarts == 0 {
		return corev1.ContainerState{}
	}
	return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 137, Reason: "OOMKilled", StartedAt: metav1.NewTime(started.Add(-time.Hour)), FinishedAt: metav1.NewTime(started.Add(-time.Second))}}
}

// Restart changes pod as the kubelet's status update after its container
// name restarted at does: a new resourceVersion, restartCount one higher,
// a new container ID and start, and the old run as the last termination.
func Restart(pod *corev1.Pod, name string, at time.Time) {
	rv, err := strconv.Atoi(pod.ResourceVersion)
	if err != nil {
		rv = 0
	}
	pod.ResourceVersion = strconv.Itoa(rv + 1)
	for i := range pod.Status.ContainerStatuses {
		st := &pod.Status.ContainerStatuses[i]
		if st.Name != name || st.State.Running == nil {
			continue
		}
		st.LastTerminationState = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 137, Reason: "OOMKilled", ContainerID: st.ContainerID,
			StartedAt: st.State.Running.StartedAt, FinishedAt: metav1.NewTime(at.Add(-time.Second)),
		}}
		st.State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}}
		st.RestartCount++
		st.ContainerID = fmt.Sprintf("containerd://%064x", rv+1)
	}
}

// RunningPod is a running pod named name in namespace shop, on node-a,
// whose container app runs as instance restarts of id, started at started.
func RunningPod(name string, restarts int32, id string, started time.Time) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, UID: types.UID(name + "-uid")},
		Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "app"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "app", ContainerID: "containerd://" + id, RestartCount: restarts,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}},
		}}},
	}
}

// ReadyPod is RunningPod, Ready, of app web (label app=web), its one
// instance started at started.
func ReadyPod(name, id string, started time.Time) *corev1.Pod {
	pod := RunningPod(name, 0, id, started)
	pod.Labels = map[string]string{"app": "web"}
	pod.Status.ContainerStatuses[0].Ready = true
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	return pod
}
