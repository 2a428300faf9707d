package plugin

import (
	"fmt"
	"io"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// requestTerms are the strategy and deadlines of a request made from the
// command line. Their defaults are kubectl-kruise's.
type requestTerms struct {
	FailurePolicy           string
	Ordered                 bool
	Force                   bool
	UnreadyGraceSeconds     int64
	TerminationGraceSeconds int64
	MinStartedSeconds       int32
	ActiveDeadlineSeconds   int64
	TTLSecondsAfterFinished int32
}

// defaultTerms are kubectl-kruise's: failurePolicy Fail, not ordered,
// three seconds of unready grace, a deadline of five minutes, kept half
// an hour. A termination grace of -1 leaves the pod's.
func defaultTerms() requestTerms {
	return requestTerms{FailurePolicy: string(v1beta1.FailurePolicyFail), UnreadyGraceSeconds: 3, TerminationGraceSeconds: -1, ActiveDeadlineSeconds: 300, TTLSecondsAfterFinished: 1800}
}

// check refuses terms the API would refuse, naming the flag.
func (t requestTerms) check(flag func(name string) string) error {
	switch {
	case t.FailurePolicy != string(v1beta1.FailurePolicyFail) && t.FailurePolicy != string(v1beta1.FailurePolicyIgnore):
		return usageError("%s %q: must be Fail or Ignore", flag("failurePolicy"), t.FailurePolicy)
	case t.UnreadyGraceSeconds < 0:
		return usageError("%s %d: must not be negative", flag("unreadyGracePeriodSeconds"), t.UnreadyGraceSeconds)
	case t.TerminationGraceSeconds < -1:
		return usageError("%s %d: must not be negative", flag("terminationGracePeriodSeconds"), t.TerminationGraceSeconds)
	case t.MinStartedSeconds < 0:
		return usageError("%s %d: must not be negative", flag("minStartedSeconds"), t.MinStartedSeconds)
	case t.ActiveDeadlineSeconds < v1beta1.MinActiveDeadlineSeconds:
		return usageError("%s %d: must be at least %d", flag("activeDeadlineSeconds"), t.ActiveDeadlineSeconds, v1beta1.MinActiveDeadlineSeconds)
	case t.TTLSecondsAfterFinished < 0:
		return usageError("%s %d: must not be negative", flag("ttlSecondsAfterFinished"), t.TTLSecondsAfterFinished)
	}
	return nil
}

// request builds the ContainerRecreateRequest that recreates containers
// of pod, labelled as made with kubectl and annotated with the reason.
func (t requestTerms) request(pod *corev1.Pod, name string, containers []string, reason string) *v1beta1.ContainerRecreateRequest {
	r := &v1beta1.ContainerRecreateRequest{
		TypeMeta: metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "ContainerRecreateRequest"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   pod.Namespace,
			Labels:      map[string]string{v1beta1.SourceLabel: v1beta1.SourceKubectl},
			Annotations: map[string]string{v1beta1.ReasonAnnotation: reason},
		},
		Spec: v1beta1.ContainerRecreateRequestSpec{
			PodName: pod.Name,
			Strategy: &v1beta1.ContainerRecreateRequestStrategy{
				FailurePolicy:             v1beta1.ContainerRecreateRequestFailurePolicyType(t.FailurePolicy),
				OrderedRecreate:           t.Ordered,
				ForceRecreate:             t.Force,
				UnreadyGracePeriodSeconds: new(t.UnreadyGraceSeconds),
				MinStartedSeconds:         t.MinStartedSeconds,
			},
			ActiveDeadlineSeconds:   new(t.ActiveDeadlineSeconds),
			TTLSecondsAfterFinished: new(t.TTLSecondsAfterFinished),
		},
	}
	if t.TerminationGraceSeconds >= 0 {
		r.Spec.Strategy.TerminationGracePeriodSeconds = new(t.TerminationGraceSeconds)
	}
	if name != "" {
		r.Name = name
	} else {
		// The pod's name, cut to leave room for the API server's suffix.
		r.GenerateName = strings.TrimRight(pod.Name[:min(len(pod.Name), 52)], "-.") + "-"
	}
	for _, c := range containers {
		r.Spec.Containers = append(r.Spec.Containers, v1beta1.ContainerRecreateRequestContainer{Name: c})
	}
	return r
}

// podContainers resolves the containers to recreate in pod: the ones
// named, each of which must be a container or native sidecar the kubelet
// starts again once stopped (pods.Restartable), or, when none is named,
// every one that is.
func podContainers(pod *corev1.Pod, named []string) ([]string, error) {
	if len(named) == 0 {
		all := policyspec.Containers(nil).Candidates(pod)
		if len(all) == 0 {
			return nil, fmt.Errorf("pod %s/%s has no container the kubelet would start again once stopped, so none can be recreated in place: %s", pod.Namespace, pod.Name, pods.UnrestartableAll(pod, policyspec.Containers(nil).Matching(pod)))
		}
		return all, nil
	}
	var out []string
	for _, name := range named {
		if slices.Contains(out, name) {
			continue
		}
		if !pods.Restartable(pod, name) {
			return nil, fmt.Errorf("pod %s/%s: %s", pod.Namespace, pod.Name, notRestartable(pod, name))
		}
		out = append(out, name)
	}
	return out, nil
}

// warnLeftAlone says on w which of the pod's containers a request that
// names none leaves alone, and why: those the kubelet would not start
// again once stopped.
func warnLeftAlone(w io.Writer, pod *corev1.Pod, named []string) {
	if len(named) > 0 {
		return
	}
	if left := policyspec.Containers(nil).Unrestartable(pod); len(left) > 0 {
		fmt.Fprintf(w, "pod %s/%s: left alone: %s\n", pod.Namespace, pod.Name, pods.UnrestartableAll(pod, left))
	}
}

// notRestartable says why a container named cannot be recreated.
func notRestartable(pod *corev1.Pod, name string) string {
	named := func(c corev1.Container) bool { return c.Name == name }
	if !slices.ContainsFunc(pod.Spec.Containers, named) && !slices.ContainsFunc(pod.Spec.InitContainers, named) {
		return fmt.Sprintf("no container %q; the pod's containers are %s", name, strings.Join(policyspec.Containers(nil).Matching(pod), ", "))
	}
	return pods.Unrestartable(pod, name)
}
