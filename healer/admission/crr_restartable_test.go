package admission

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// TestRequestsForContainersTheKubeletWouldNotRestart: a request is refused
// for a container the kubelet would not start again once stopped, by the
// pod's restartPolicy or the container's own restartPolicy and rules, with
// a cause that names the pod's field; the other containers of such a pod
// can still be recreated.
func TestRequestsForContainersTheKubeletWouldNotRestart(t *testing.T) {
	never, onFailure := corev1.ContainerRestartPolicyNever, corev1.ContainerRestartPolicyOnFailure
	cases := []struct {
		name      string
		change    func(*corev1.Pod)
		container string
		// want is a part of the cause on spec.containers[0].name, "" for none.
		want string
	}{
		{name: "a regular container of an Always pod", container: "app"},
		{name: "the pod's OnFailure", container: "app", change: func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
			want: "pod web: spec.restartPolicy is OnFailure: the kubelet would not start container app again"},
		{name: "the container's own Never", container: "app", change: func(p *corev1.Pod) { p.Spec.Containers[0].RestartPolicy = &never },
			want: "pod web: spec.containers[0].restartPolicy is Never: the kubelet would not start container app again once stopped"},
		{name: "the container's own OnFailure", container: "app", change: func(p *corev1.Pod) { p.Spec.Containers[0].RestartPolicy = &onFailure },
			want: "pod web: spec.containers[0].restartPolicy is OnFailure"},
		{name: "a rule that restarts every container on SIGTERM", container: "app", change: func(p *corev1.Pod) {
			p.Spec.Containers[0].RestartPolicy = new(corev1.ContainerRestartPolicyAlways)
			p.Spec.Containers[0].RestartPolicyRules = []corev1.ContainerRestartRule{{Action: corev1.ContainerRestartRuleActionRestartAllContainers,
				ExitCodes: &corev1.ContainerRestartRuleOnExitCodes{Operator: corev1.ContainerRestartRuleOnExitCodesOpIn, Values: []int32{143}}}}
		}, want: "pod web: spec.containers[0].restartPolicyRules[0] restarts all the pod's containers on exit code 143"},
		{name: "another container's own Never", container: "app", change: func(p *corev1.Pod) {
			p.Spec.Containers[1].RestartPolicy = &never
		}},
		{name: "a native sidecar of a Never pod", container: "sidecar", change: func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }},
		{name: "an ordinary init container", container: "setup", want: "is an init container, which runs to completion"},
	}
	for _, tc := range cases {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"}, Spec: podSpec(), Status: runningStatus()}
		pod.Spec.RestartPolicy = corev1.RestartPolicyAlways
		if tc.change != nil {
			tc.change(pod)
		}
		st := pods.ContainerStatus(pod, tc.container)
		crr := &v1beta1.ContainerRecreateRequest{Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web", Containers: []v1beta1.ContainerRecreateRequestContainer{{
			Name: tc.container, StatusContext: &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: st.ContainerID, RestartCount: st.RestartCount},
		}}}}
		errs := validateAgainstPod(crr, "shop", pod)
		switch {
		case tc.want == "" && len(errs) > 0:
			t.Errorf("%s: refused: %v", tc.name, errs.ToAggregate())
		case tc.want != "" && (len(errs) != 1 || errs[0].Field != "spec.containers[0].name" || !strings.Contains(errs[0].Detail, tc.want)):
			t.Errorf("%s: causes %v; want one on spec.containers[0].name saying %q", tc.name, errs.ToAggregate(), tc.want)
		}
	}
}
