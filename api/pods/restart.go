package pods

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// stopExitCodes are the exit codes a container stopped by Rejuv can end
// with: 0 or 143 (128 + SIGTERM) when it ends on SIGTERM, 137 (128 +
// SIGKILL) when its grace period runs out. Which one is not known before
// the stop, so a container counts as restartable only when the kubelet
// would start it again after each of them.
var stopExitCodes = []int32{0, 143, 137}

// Restartable says whether the kubelet starts the named container of the
// pod again once Rejuv stops it; Unrestartable says why not.
func Restartable(pod *corev1.Pod, name string) bool {
	return Unrestartable(pod, name) == ""
}

// Unrestartable says why the kubelet would not start the named container
// of the pod again once Rejuv stops it, naming the pod's field that
// decides; "" when it would, whatever exit code the stop leaves (see
// stopExitCodes). It follows the kubelet: the container's own
// restartPolicyRules, then its own restartPolicy, then the pod's
// restartPolicy (container restart rules, on by default since Kubernetes
// 1.35). Only regular containers and native sidecars can be restarted; an
// ordinary init container runs once. A rule whose action is not Restart
// (RestartAllContainers restarts every container of the pod, init
// containers too) makes a stop more than a recreation of the container,
// so it counts as not restartable.
func Unrestartable(pod *corev1.Pod, name string) string {
	switch c := FindContainer(pod, name); c.Kind {
	case ContainerMissing:
		return fmt.Sprintf("the pod has no container or native sidecar %s: the kubelet would not start it", name)
	case ContainerInit:
		return fmt.Sprintf("%s is an init container that runs once, not a native sidecar (restartPolicy Always): the kubelet would not start container %s again once stopped", c.Field(), name)
	default:
		return afterStop(pod, c.Spec, c.Field())
	}
}

// UnrestartableAll says why the kubelet would not start again each of
// the pod's containers named, one Unrestartable after the other,
// separated by "; ".
func UnrestartableAll(pod *corev1.Pod, names []string) string {
	why := make([]string, 0, len(names))
	for _, name := range names {
		why = append(why, Unrestartable(pod, name))
	}
	return strings.Join(why, "; ")
}

// afterStop says why the kubelet would not start c again after a stop
// that ends it with one of stopExitCodes, or "".
func afterStop(pod *corev1.Pod, c *corev1.Container, fld *field.Path) string {
	for _, code := range stopExitCodes {
		if why := afterExit(pod, c, fld, code); why != "" {
			return why
		}
	}
	return ""
}

// afterExit says why the kubelet would not start c again after it exits
// with code, or "". The order is the kubelet's: the first of the
// container's rules that matches the code decides; without one, the
// container's restartPolicy; without that, the pod's. A value Rejuv does
// not know counts as not restartable.
func afterExit(pod *corev1.Pod, c *corev1.Container, fld *field.Path, code int32) string {
	notAgain := fmt.Sprintf("the kubelet would not start container %s again if a stop ends it with exit code %d", c.Name, code)
	if c.RestartPolicy == nil {
		p := field.NewPath("spec", "restartPolicy")
		switch pod.Spec.RestartPolicy {
		case "", corev1.RestartPolicyAlways:
			return ""
		case corev1.RestartPolicyOnFailure:
			if code != 0 {
				return ""
			}
			return fmt.Sprintf("%s is OnFailure: %s", p, notAgain)
		case corev1.RestartPolicyNever:
			return fmt.Sprintf("%s is Never: the kubelet would not start container %s again once stopped", p, c.Name)
		default:
			return fmt.Sprintf("%s is %q, which Rejuv does not know: it cannot tell whether the kubelet would start container %s again", p, pod.Spec.RestartPolicy, c.Name)
		}
	}
	rules := fld.Child("restartPolicyRules")
	for i, r := range c.RestartPolicyRules {
		match, known := matchesExitCode(r, code)
		switch {
		case !known && r.Action == corev1.ContainerRestartRuleActionRestart:
			// Matching or not, it cannot keep the container from
			// starting again.
			continue
		case !known:
			return fmt.Sprintf("%s has a condition Rejuv does not know: it cannot tell what the kubelet would do once container %s is stopped", rules.Index(i), c.Name)
		case !match:
			continue
		}
		switch r.Action {
		case corev1.ContainerRestartRuleActionRestart:
			return ""
		case corev1.ContainerRestartRuleActionRestartAllContainers:
			return fmt.Sprintf("%s restarts all the pod's containers on exit code %d: a stop of container %s would restart every container of the pod, init containers too, not %s alone", rules.Index(i), code, c.Name, c.Name)
		default:
			return fmt.Sprintf("%s has action %q, which Rejuv does not know, for exit code %d: it cannot tell what the kubelet would do once container %s is stopped", rules.Index(i), r.Action, code, c.Name)
		}
	}
	p, unmatched := fld.Child("restartPolicy"), ""
	if len(c.RestartPolicyRules) > 0 {
		unmatched = fmt.Sprintf(" and no rule of %s matches exit code %d", rules, code)
	}
	switch *c.RestartPolicy {
	case corev1.ContainerRestartPolicyAlways:
		return ""
	case corev1.ContainerRestartPolicyOnFailure:
		if code != 0 {
			return ""
		}
		return fmt.Sprintf("%s is OnFailure%s: %s", p, unmatched, notAgain)
	case corev1.ContainerRestartPolicyNever:
		if unmatched != "" {
			return fmt.Sprintf("%s is Never%s: %s", p, unmatched, notAgain)
		}
		return fmt.Sprintf("%s is Never: the kubelet would not start container %s again once stopped", p, c.Name)
	default:
		return fmt.Sprintf("%s is %q, which Rejuv does not know: it cannot tell whether the kubelet would start container %s again", p, *c.RestartPolicy, c.Name)
	}
}

// matchesExitCode says whether the rule's condition holds for code, as
// the kubelet reads it: In the values, or NotIn them; known is false for a
// condition Rejuv cannot read (no exit codes, or another operator), which
// a newer kubelet may.
func matchesExitCode(r corev1.ContainerRestartRule, code int32) (match, known bool) {
	if r.ExitCodes == nil {
		return false, false
	}
	in := slices.Contains(r.ExitCodes.Values, code)
	switch r.ExitCodes.Operator {
	case corev1.ContainerRestartRuleOnExitCodesOpIn:
		return in, true
	case corev1.ContainerRestartRuleOnExitCodesOpNotIn:
		return !in, true
	default:
		return false, false
	}
}
