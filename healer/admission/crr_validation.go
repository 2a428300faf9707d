package admission

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// validateSpec checks what a request says, without its pod.
func validateSpec(spec *v1beta1.ContainerRecreateRequestSpec) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("spec")
	if spec.PodName == "" {
		errs = append(errs, field.Required(p.Child("podName"), "name the pod whose containers to recreate"))
	}
	if len(spec.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), "list at least one container to recreate (kubectl rejuv restart fills in every container when none is named)"))
	}
	seen := sets.New[string]()
	for i, c := range spec.Containers {
		cp := p.Child("containers").Index(i).Child("name")
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(cp, "name the container"))
		case seen.Has(c.Name):
			errs = append(errs, field.Duplicate(cp, c.Name))
		}
		seen.Insert(c.Name)
	}
	errs = append(errs, policyspec.ValidateRequestTerms(p, spec.Strategy, spec.ActiveDeadlineSeconds, spec.TTLSecondsAfterFinished)...)
	return errs
}

// validateAgainstPod checks that the pod can have these containers
// recreated now. pod is nil when it does not exist.
func validateAgainstPod(crr *v1beta1.ContainerRecreateRequest, namespace string, pod *corev1.Pod) field.ErrorList {
	podPath := field.NewPath("spec", "podName")
	switch {
	case pod == nil:
		return field.ErrorList{field.Invalid(podPath, crr.Spec.PodName, fmt.Sprintf("no such pod in namespace %s", namespace))}
	case pod.DeletionTimestamp != nil:
		return field.ErrorList{field.Invalid(podPath, crr.Spec.PodName, "the pod is being deleted")}
	case pod.Spec.NodeName == "":
		return field.ErrorList{field.Invalid(podPath, crr.Spec.PodName, "the pod is not scheduled to a node yet")}
	case pods.Finished(pod):
		return field.ErrorList{field.Invalid(podPath, crr.Spec.PodName, fmt.Sprintf("the pod has finished (phase %s); its containers will not run again", pod.Status.Phase))}
	}
	var errs field.ErrorList
	if s := crr.Spec.Strategy; (s == nil || s.TerminationGracePeriodSeconds == nil) && podGrace(pod) > v1beta1.MaxGracePeriodSeconds {
		errs = append(errs, field.Required(field.NewPath("spec", "strategy", "terminationGracePeriodSeconds"),
			fmt.Sprintf("pod %s's terminationGracePeriodSeconds (%d), which a request takes when it sets none, is more than the maximum of %d seconds (a day); set spec.strategy.terminationGracePeriodSeconds to at most %d",
				pod.Name, podGrace(pod), v1beta1.MaxGracePeriodSeconds, v1beta1.MaxGracePeriodSeconds)))
	}
	for i, c := range crr.Spec.Containers {
		p := field.NewPath("spec", "containers").Index(i).Child("name")
		kind := pods.FindContainer(pod, c.Name).Kind
		unrestartable := pods.Unrestartable(pod, c.Name)
		switch {
		case c.Name == "":
			// Reported by validateSpec.
		case kind == pods.ContainerMissing:
			errs = append(errs, field.Invalid(p, c.Name, fmt.Sprintf("pod %s has no container of that name", pod.Name)))
		case kind == pods.ContainerInit:
			errs = append(errs, field.Invalid(p, c.Name, "is an init container, which runs to completion; only containers and native sidecars (init containers with restartPolicy: Always) can be recreated"))
		case unrestartable != "":
			errs = append(errs, field.Invalid(p, c.Name, fmt.Sprintf("pod %s: %s", pod.Name, unrestartable)))
		case c.StatusContext == nil || c.StatusContext.ContainerID == "":
			errs = append(errs, field.Invalid(p, c.Name, "has not been started yet (the pod's status has no containerID for it); retry once it runs"))
		}
		if size := preStopSize(pod, c.Name); size > pods.MaxLifecycleBytes {
			errs = append(errs, field.Forbidden(field.NewPath("spec", "containers").Index(i).Child("preStop"),
				fmt.Sprintf("container %s's lifecycle.preStop is %d bytes, more than the %d a request copies", c.Name, size, pods.MaxLifecycleBytes)))
		}
	}
	return errs
}

// preStopSize is the size of the container's preStop as the request would
// copy it (its protobuf encoding), 0 without one. Requests are cached by
// the manager and the daemon, so what they copy is bounded.
func preStopSize(pod *corev1.Pod, container string) int {
	spec := pods.FindContainer(pod, container).Spec
	if spec == nil || spec.Lifecycle == nil || spec.Lifecycle.PreStop == nil {
		return 0
	}
	return spec.Lifecycle.PreStop.Size()
}

// validateUpdate keeps the spec, the routing labels and the admission time
// as they were created.
func validateUpdate(old, updated *v1beta1.ContainerRecreateRequest) field.ErrorList {
	var errs field.ErrorList
	if !equality.Semantic.DeepEqual(old.Spec, updated.Spec) {
		errs = append(errs, field.Forbidden(field.NewPath("spec"), "is immutable; delete the request and create a new one"))
	}
	labels := field.NewPath("metadata", "labels")
	for _, key := range []string{v1beta1.PodUIDLabel, v1beta1.PodNameLabel, v1beta1.NodeNameLabel} {
		if old.Labels[key] != updated.Labels[key] {
			errs = append(errs, field.Forbidden(labels.Key(key), "is set when the request is created and is immutable"))
		}
	}
	if old.Annotations[v1beta1.RequestedAtAnnotation] != updated.Annotations[v1beta1.RequestedAtAnnotation] {
		errs = append(errs, field.Forbidden(field.NewPath("metadata", "annotations").Key(v1beta1.RequestedAtAnnotation), "is set when the request is created and is immutable"))
	}
	if _, was := old.Labels[v1beta1.ActiveLabel]; !was {
		if _, is := updated.Labels[v1beta1.ActiveLabel]; is {
			errs = append(errs, field.Forbidden(labels.Key(v1beta1.ActiveLabel), "cannot be set again once the request has completed"))
		}
	}
	return errs
}
