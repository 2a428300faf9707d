package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

const readinessGate corev1.PodConditionType = v1beta1.PodReadyCondition

// The opted-in namespaces' webhook, and the one for every other namespace
// but the opted-out and Kubernetes' own.
// +kubebuilder:webhook:path=/mutate-v1-pod-readiness-gate,mutating=true,failurePolicy=ignore,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod-readiness-gate.rejuv.dev,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"namespaceSelector":{"matchLabels":{"rejuv.dev/readiness-gate":"enabled"}}}`
// +kubebuilder:webhook:path=/mutate-v1-pod-policy-readiness-gate,mutating=true,failurePolicy=ignore,sideEffects=None,groups="",resources=pods,verbs=create,versions=v1,name=mpod-policy-readiness-gate.rejuv.dev,admissionReviewVersions=v1,timeoutSeconds=5,patch=`{"namespaceSelector":{"matchExpressions":[{"key":"rejuv.dev/readiness-gate","operator":"NotIn","values":["enabled","disabled"]},{"key":"kubernetes.io/metadata.name","operator":"NotIn","values":["kube-system","kube-public","kube-node-lease"]}]}}`
// +kubebuilder:rbac:groups=rejuv.dev,resources=recreatepolicies,verbs=get;list;watch

// PodReadinessGateInjector adds the KruisePodReady readiness gate to new
// pods: every pod when Policies is nil (the webhook configuration selects
// the opted-in namespaces), else the pods a RecreatePolicy of their
// namespace selects. Its failure policy is Ignore: a pod created without
// the gate only loses the unready grace, which its requests then say.
type PodReadinessGateInjector struct {
	Decoder admission.Decoder
	// Policies reads RecreatePolicies (the manager's cache); nil gives
	// every pod the gate.
	Policies client.Reader
}

// Handle implements admission.Handler.
func (p *PodReadinessGateInjector) Handle(ctx context.Context, req admission.Request) admission.Response {
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
	if p.Policies != nil {
		selected, err := p.selected(ctx, req.Namespace, pod)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		if !selected {
			return admission.Allowed("no RecreatePolicy selects the pod")
		}
	}
	pod.Spec.ReadinessGates = append(pod.Spec.ReadinessGates, corev1.PodReadinessGate{ConditionType: readinessGate})
	raw, err := json.Marshal(pod)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode pod: %w", err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// selected says whether a RecreatePolicy of namespace selects pod.
func (p *PodReadinessGateInjector) selected(ctx context.Context, namespace string, pod *corev1.Pod) (bool, error) {
	list := &v1alpha1.RecreatePolicyList{}
	if err := p.Policies.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return false, fmt.Errorf("list the RecreatePolicies of namespace %s: %w", namespace, err)
	}
	return slices.ContainsFunc(list.Items, func(policy v1alpha1.RecreatePolicy) bool { return policyspec.Selects(&policy, pod.Labels) }), nil
}
