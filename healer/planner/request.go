package planner

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// Instance identifies one firing of a trigger for one pod: a scheduled run
// by its time; a rule by the containers it found, as they are now (their
// IDs), so that the same containers are never recreated twice for the same
// finding while a recreated one can be found again; and by the attempt, so
// that a finding whose request failed (the containers not recreated), or a
// run's pod whose request was withdrawn by a pause, can be tried again.
func Instance(c *PodCandidate) string {
	if c.Trigger.Kind == TriggerSchedule {
		run := "run:" + strconv.FormatInt(c.Trigger.Run.Unix(), 10)
		if c.Attempt > 0 {
			run += ":attempt=" + strconv.Itoa(c.Attempt)
		}
		return run
	}
	ids := make([]string, 0, len(c.Containers))
	for _, name := range c.Containers {
		ids = append(ids, name+"="+containerID(c.Pod, name))
	}
	slices.Sort(ids)
	finding := "rule:" + c.Trigger.Rule + ":" + strings.Join(ids, ",")
	if c.Attempt > 0 {
		finding += ":attempt=" + strconv.Itoa(c.Attempt)
	}
	return finding
}

func containerID(pod *corev1.Pod, name string) string {
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for _, st := range list {
			if st.Name == name {
				return st.ContainerID
			}
		}
	}
	return ""
}

// RequestName is the deterministic name of the request for a candidate:
// the policy's name (cut to fit) and a hash of the policy, the pod UID and
// the trigger instance. A retry or a restarted manager computes the same
// name, and the API server refuses the second create.
func RequestName(policy *v1alpha1.RecreatePolicy, c *PodCandidate) string {
	sum := sha256.Sum256([]byte(string(policy.UID) + "/" + string(c.Pod.UID) + "/" + Instance(c)))
	prefix := policy.Name
	if len(prefix) > 40 {
		prefix = strings.TrimRight(prefix[:40], "-.")
	}
	return prefix + "-" + hex.EncodeToString(sum[:])[:12]
}

// Request builds the ContainerRecreateRequest that carries out an admitted
// candidate: named by RequestName, labelled with the policy and trigger,
// annotated with the reason, owned by the policy, with the policy's
// strategy (its unready grace policyspec.DefaultUnreadyGraceSeconds unless
// the policy sets one; forcing the recreation when the candidate must be)
// and deadlines.
func Request(policy *v1alpha1.RecreatePolicy, c *PodCandidate) *appsv1beta1.ContainerRecreateRequest {
	tpl := policy.Spec.Recreate
	crr := &appsv1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{
			Name:      RequestName(policy, c),
			Namespace: policy.Namespace,
			Labels: map[string]string{
				appsv1beta1.PolicyLabel:  policy.Name,
				appsv1beta1.TriggerLabel: strings.ReplaceAll(c.Trigger.String(), "/", "."),
			},
			Annotations: map[string]string{appsv1beta1.ReasonAnnotation: c.Reason},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: v1alpha1.GroupVersion.String(), Kind: "RecreatePolicy",
				Name: policy.Name, UID: policy.UID,
				Controller: new(true), BlockOwnerDeletion: new(true),
			}},
		},
		Spec: appsv1beta1.ContainerRecreateRequestSpec{
			PodName:                 c.Pod.Name,
			ActiveDeadlineSeconds:   tpl.ActiveDeadlineSeconds,
			TTLSecondsAfterFinished: keepFor(policy),
		},
	}
	// A policy kubectl rejuv wrote for a rolling restart passes its
	// source on, so that its requests count as the plugin's.
	if source := policy.Labels[appsv1beta1.SourceLabel]; source != "" {
		crr.Labels[appsv1beta1.SourceLabel] = source
	}
	if c.Trigger.Kind == TriggerSchedule {
		crr.Annotations[appsv1beta1.RunAnnotation] = c.Trigger.Run.UTC().Format("2006-01-02T15:04:05Z07:00")
	}
	crr.Spec.Strategy = &appsv1beta1.ContainerRecreateRequestStrategy{}
	if tpl.Strategy != nil {
		crr.Spec.Strategy = tpl.Strategy.DeepCopy()
	}
	crr.Spec.Strategy.UnreadyGracePeriodSeconds = new(policyspec.UnreadyGrace(tpl.Strategy))
	if c.Force {
		crr.Spec.Strategy.ForceRecreate = true
	}
	for _, name := range c.Containers {
		crr.Spec.Containers = append(crr.Spec.Containers, appsv1beta1.ContainerRecreateRequestContainer{Name: name})
	}
	return crr
}

// keepFor is how long a finished request is kept: the template's TTL, but
// no less than the policy's limits look back (an hour for maxPerHour, the
// cooldown, memoryRecurrence for a policy with memory rules), because the
// policy counts its past recreations from its requests.
func keepFor(policy *v1alpha1.RecreatePolicy) *int32 {
	ttl := policy.Spec.Recreate.TTLSecondsAfterFinished
	limits := policy.Spec.Limits
	var floor int32
	if limits.MaxPerHour != nil {
		floor = 3600
	}
	if limits.Cooldown != nil {
		floor = max(floor, int32(min(limits.Cooldown.Seconds(), math.MaxInt32)))
	}
	if policyspec.ReadsMemory(&policy.Spec) {
		recurrence := policyspec.DefaultMemoryRecurrence
		if limits.MemoryRecurrence != nil {
			recurrence = limits.MemoryRecurrence.Duration
		}
		floor = max(floor, int32(min(recurrence.Seconds(), math.MaxInt32)))
	}
	if ttl == nil || *ttl >= floor {
		return ttl
	}
	return &floor
}
