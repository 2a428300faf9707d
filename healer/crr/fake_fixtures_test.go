package crr

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// gatedPod is pod ns/web (UID uid-web) on node n, with one container, app,
// and Rejuv's readiness gate: the pod of the tests on a fake client.
func gatedPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-web"},
		Spec:       corev1.PodSpec{NodeName: "n", ReadinessGates: []corev1.PodReadinessGate{{ConditionType: PodReadyCondition}}, Containers: []corev1.Container{{Name: "app"}}},
	}
}

// activeRequest is an active request named name for gatedPod's app
// container, with an unready grace of 3 s, as the webhook admits it.
func activeRequest(name string) *v1beta1.ContainerRecreateRequest {
	return &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: map[string]string{
			v1beta1.PodUIDLabel: "uid-web", v1beta1.NodeNameLabel: "n", v1beta1.ActiveLabel: "true",
		}},
		Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web", Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}},
			Strategy: &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: ptr.To[int64](3)}},
	}
}
