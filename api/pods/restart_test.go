package pods

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// TestRestartable: the kubelet starts a stopped container again by its
// own restartPolicyRules, then its own restartPolicy, then the pod's; a
// stop may leave exit code 0, 143 or 137, and only a container restarted
// after each of them is restartable. The reason names the pod's field
// that decides.
func TestRestartable(t *testing.T) {
	rule := func(action corev1.ContainerRestartRuleAction, op corev1.ContainerRestartRuleOnExitCodesOperator, codes ...int32) corev1.ContainerRestartRule {
		return corev1.ContainerRestartRule{Action: action, ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: op, Values: codes}}
	}
	restart, all := corev1.ContainerRestartRuleActionRestart, corev1.ContainerRestartRuleActionRestartAllContainers
	in, notIn := corev1.ContainerRestartRuleOnExitCodesOpIn, corev1.ContainerRestartRuleOnExitCodesOpNotIn
	cases := []struct {
		name string
		pod  corev1.RestartPolicy
		// policy and rules are container app's own.
		policy    corev1.ContainerRestartPolicy
		rules     []corev1.ContainerRestartRule
		container string
		// why is "" when restartable, else the start of the reason.
		why string
	}{
		{name: "pod default", container: "app"},
		{name: "pod Always", pod: corev1.RestartPolicyAlways, container: "app"},
		{name: "pod OnFailure: a stop may exit 0", pod: corev1.RestartPolicyOnFailure, container: "app",
			why: "spec.restartPolicy is OnFailure: the kubelet would not start container app again if a stop ends it with exit code 0"},
		{name: "pod Never", pod: corev1.RestartPolicyNever, container: "app",
			why: "spec.restartPolicy is Never: the kubelet would not start container app again once stopped"},
		{name: "own Never in an Always pod", pod: corev1.RestartPolicyAlways, policy: corev1.ContainerRestartPolicyNever, container: "app",
			why: "spec.containers[1].restartPolicy is Never: the kubelet would not start container app again once stopped"},
		{name: "own OnFailure in an Always pod", policy: corev1.ContainerRestartPolicyOnFailure, container: "app",
			why: "spec.containers[1].restartPolicy is OnFailure: the kubelet would not start container app again if a stop ends it with exit code 0"},
		{name: "own Always in a Never pod", pod: corev1.RestartPolicyNever, policy: corev1.ContainerRestartPolicyAlways, container: "app"},
		{name: "another container's own Never leaves app alone", pod: corev1.RestartPolicyAlways, policy: corev1.ContainerRestartPolicyNever, container: "web"},
		{name: "Never with a rule restarting every stop's code", policy: corev1.ContainerRestartPolicyNever,
			rules: []corev1.ContainerRestartRule{rule(restart, in, 0, 137, 143)}, container: "app"},
		{name: "Never with a NotIn rule restarting every stop's code", policy: corev1.ContainerRestartPolicyNever,
			rules: []corev1.ContainerRestartRule{rule(restart, notIn, 1, 2)}, container: "app"},
		{name: "Never with a rule missing SIGKILL's code", policy: corev1.ContainerRestartPolicyNever,
			rules: []corev1.ContainerRestartRule{rule(restart, in, 0, 143)}, container: "app",
			why: "spec.containers[1].restartPolicy is Never and no rule of spec.containers[1].restartPolicyRules matches exit code 137"},
		{name: "OnFailure with a rule restarting exit 0", policy: corev1.ContainerRestartPolicyOnFailure,
			rules: []corev1.ContainerRestartRule{rule(restart, in, 0)}, container: "app"},
		{name: "OnFailure with a rule for other codes", policy: corev1.ContainerRestartPolicyOnFailure,
			rules: []corev1.ContainerRestartRule{rule(restart, in, 42)}, container: "app",
			why: "spec.containers[1].restartPolicy is OnFailure and no rule of spec.containers[1].restartPolicyRules matches exit code 0"},
		{name: "the first matching rule decides", policy: corev1.ContainerRestartPolicyAlways,
			rules: []corev1.ContainerRestartRule{rule(restart, in, 0), rule(all, in, 0, 143)}, container: "app",
			why: "spec.containers[1].restartPolicyRules[1] restarts all the pod's containers on exit code 143"},
		{name: "RestartAllContainers is more than a recreation", policy: corev1.ContainerRestartPolicyAlways,
			rules: []corev1.ContainerRestartRule{rule(all, notIn, 1)}, container: "app",
			why: "spec.containers[1].restartPolicyRules[0] restarts all the pod's containers on exit code 0"},
		{name: "a rule for codes no stop leaves", policy: corev1.ContainerRestartPolicyAlways,
			rules: []corev1.ContainerRestartRule{rule(all, in, 42)}, container: "app"},
		{name: "an unknown condition that cannot stop a restart", policy: corev1.ContainerRestartPolicyAlways,
			rules: []corev1.ContainerRestartRule{{Action: restart}}, container: "app"},
		{name: "an unknown condition of another action", policy: corev1.ContainerRestartPolicyAlways,
			rules: []corev1.ContainerRestartRule{{Action: all}}, container: "app",
			why: "spec.containers[1].restartPolicyRules[0] has a condition Rejuv does not know"},
		{name: "an unknown action", policy: corev1.ContainerRestartPolicyAlways,
			rules: []corev1.ContainerRestartRule{rule("Pause", in, 143)}, container: "app",
			why: `spec.containers[1].restartPolicyRules[0] has action "Pause", which Rejuv does not know`},
		{name: "a native sidecar in a Never pod", pod: corev1.RestartPolicyNever, container: "proxy"},
		{name: "an init container", container: "setup",
			why: "spec.initContainers[0] is an init container that runs once"},
		{name: "a name the pod lacks", container: "ghost", why: "the pod has no container or native sidecar ghost"},
	}
	for _, tc := range cases {
		pod := &corev1.Pod{Spec: corev1.PodSpec{
			RestartPolicy:  tc.pod,
			InitContainers: []corev1.Container{{Name: "setup"}, {Name: "proxy", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways)}},
			Containers:     []corev1.Container{{Name: "web"}, {Name: "app", RestartPolicyRules: tc.rules}},
		}}
		if tc.policy != "" {
			pod.Spec.Containers[1].RestartPolicy = &tc.policy
		}
		why := Unrestartable(pod, tc.container)
		if got := Restartable(pod, tc.container); got != (tc.why == "") || got != (why == "") {
			t.Errorf("%s: Restartable %t, reason %q; want restartable %t", tc.name, got, why, tc.why == "")
			continue
		}
		if !strings.HasPrefix(why, tc.why) {
			t.Errorf("%s: reason %q; want it to say %q", tc.name, why, tc.why)
		}
	}
}
