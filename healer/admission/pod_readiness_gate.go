package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// ReadinessGateNamespaceLabel opts a namespace in: its new pods get the
// KruisePodReady readiness gate, so that a request's unreadyGracePeriodSeconds
// can take them out of service before their containers are stopped.
const ReadinessGateNamespaceLabel = "rejuv.dev/readiness-gate"

const readinessGate corev1.PodConditionType = v1beta1.PodReadyCondition

// +kubebuilder:webhook:path=/mutate-v1-pod-readiness-gate,mutating=true,failurePolicy=ignore,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod-readiness-gate.rejuv.dev,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"namespaceSelector":{"matchLabels":{"rejuv.dev/readiness-gate":"enabled"}}}`

// PodReadinessGateInjector adds the KruisePodReady readiness gate to pods
// created in namespaces labelled rejuv.dev/readiness-gate=enabled (the
// webhook configuration selects them). Its failure policy is Ignore: a pod
// created without the gate only loses the unready grace.
type PodReadinessGateInjector struct {
	Decoder admission.Decoder
}

// Handle implements admission.Handler.
func (p *PodReadinessGateInjector) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	pod := &corev1.Pod{}
	if err := p.Decoder.Decode(req, pod); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode pod: %w", err))
	}
	if pods.HasReadinessGate(pod) {
		return admission.Allowed("the pod already has the readiness gate")
	}
	pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: readinessGate})
	raw, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode pod: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}
