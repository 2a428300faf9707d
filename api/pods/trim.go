package pods

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Trim returns a copy of the pod with only the fields Rejuv reads: what
// the manager keeps of every pod of the cluster in its cache, and what a
// policy's rules see as input.pod. It shares the kept values with pod.
//
//   - metadata: name, namespace, uid, resourceVersion, generation,
//     creationTimestamp, deletionTimestamp, deletionGracePeriodSeconds,
//     labels, annotations, ownerReferences (never managedFields);
//   - spec: nodeName, restartPolicy, terminationGracePeriodSeconds,
//     readinessGates, serviceAccountName, priorityClassName, priority, and
//     of each container and init container: name, image, ports,
//     resources, restartPolicy, restartPolicyRules, lifecycle;
//   - status: observedGeneration, phase, conditions, message, reason,
//     hostIP, podIP, startTime, qosClass, and of each container's and init
//     container's status: name, state, lastState, ready, restartCount,
//     image, containerID, started.
//
// Everything else (environment, volumes, probes, scheduling constraints,
// security contexts, ephemeral containers, ...) is left out: at thousands
// of pods it is most of a pod's memory, and nothing in Rejuv needs it.
// Annotations and lifecycles past their bounds (MaxKeptAnnotationBytes,
// MaxKeptAnnotationsBytes, MaxLifecycleBytes) are left out too, and
// TrimmedAnnotation names them. Trimming a trimmed pod gives the same pod.
func Trim(pod *corev1.Pod) *corev1.Pod {
	m := &pod.ObjectMeta
	s := &pod.Spec
	st := &pod.Status
	annotations, droppedAnnotations := boundAnnotations(m.Annotations)
	containers, droppedLifecycles := trimContainers(s.Containers, nil)
	initContainers, droppedLifecycles := trimContainers(s.InitContainers, droppedLifecycles)
	if note := trimmedNote(droppedAnnotations, droppedLifecycles); note != "" {
		if len(droppedAnnotations) == 0 {
			annotations = maps.Clone(annotations)
		}
		if annotations == nil {
			annotations = map[string]string{}
		}
		annotations[TrimmedAnnotation] = note
	}
	return &corev1.Pod{
		TypeMeta: pod.TypeMeta,
		ObjectMeta: metav1.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID, ResourceVersion: m.ResourceVersion, Generation: m.Generation,
			CreationTimestamp: m.CreationTimestamp, DeletionTimestamp: m.DeletionTimestamp, DeletionGracePeriodSeconds: m.DeletionGracePeriodSeconds,
			Labels: m.Labels, Annotations: annotations, OwnerReferences: m.OwnerReferences,
		},
		Spec: corev1.PodSpec{
			NodeName: s.NodeName, RestartPolicy: s.RestartPolicy, TerminationGracePeriodSeconds: s.TerminationGracePeriodSeconds,
			ReadinessGates: s.ReadinessGates, ServiceAccountName: s.ServiceAccountName, PriorityClassName: s.PriorityClassName, Priority: s.Priority,
			Containers: containers, InitContainers: initContainers,
		},
		Status: corev1.PodStatus{
			ObservedGeneration: st.ObservedGeneration, Phase: st.Phase, Conditions: trimConditions(st.Conditions), Message: st.Message, Reason: st.Reason,
			HostIP: st.HostIP, PodIP: st.PodIP, StartTime: st.StartTime, QOSClass: st.QOSClass,
			ContainerStatuses: trimStatuses(st.ContainerStatuses), InitContainerStatuses: trimStatuses(st.InitContainerStatuses),
		},
	}
}

// TrimObject is Trim for a cache's transform (and ListInPages): a pod
// comes out trimmed, any other object as it is.
func TrimObject(obj any) (any, error) {
	if pod, ok := obj.(*corev1.Pod); ok {
		return Trim(pod), nil
	}
	return obj, nil
}

// trimContainers trims the containers, and appends to dropped the names
// of those whose lifecycle is past MaxLifecycleBytes.
func trimContainers(cs []corev1.Container, dropped []string) ([]corev1.Container, []string) {
	if cs == nil {
		return nil, dropped
	}
	out := make([]corev1.Container, len(cs))
	for i := range cs {
		c := &cs[i]
		lifecycle, over := boundLifecycle(c)
		if over {
			dropped = append(dropped, c.Name)
		}
		out[i] = corev1.Container{
			Name: c.Name, Image: c.Image, Ports: c.Ports, Resources: c.Resources,
			RestartPolicy: c.RestartPolicy, RestartPolicyRules: c.RestartPolicyRules, Lifecycle: lifecycle,
		}
	}
	return out, dropped
}

// trimConditions copies the conditions into a slice of their number: the
// decoder's slice, grown by appending, holds room for eight conditions
// where a pod has five, a kilobyte a pod kept for nothing.
func trimConditions(cs []corev1.PodCondition) []corev1.PodCondition {
	if cs == nil {
		return nil
	}
	return append(make([]corev1.PodCondition, 0, len(cs)), cs...)
}

func trimStatuses(ss []corev1.ContainerStatus) []corev1.ContainerStatus {
	if ss == nil {
		return nil
	}
	out := make([]corev1.ContainerStatus, len(ss))
	for i := range ss {
		s := &ss[i]
		out[i] = corev1.ContainerStatus{
			Name: s.Name, State: s.State, LastTerminationState: s.LastTerminationState, Ready: s.Ready,
			RestartCount: s.RestartCount, Image: s.Image, ContainerID: s.ContainerID, Started: s.Started,
		}
	}
	return out
}
