package admission

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/healer/pause"
)

// defaultTerminationGracePeriodSeconds is the pod's default when it sets none.
const defaultTerminationGracePeriodSeconds int64 = 30

// CRRMutator admits a ContainerRecreateRequest when it is created, in one
// call: it fills in what the daemon needs from its pod (the labels that
// route the request to its node, each container's identity at this moment
// (statusContext), its preStop and ports, the strategy's defaults, and
// the moment it was admitted, to the nanosecond), rejects a request that
// cannot be carried out (each rejection names the field) or that sets
// fields only the system may set, and judges the manager's own requests by
// their policy (see ownRequestDenial). Validating at this stage rather than
// in a validating webhook spares every request a second call and a second
// read of the pod; the validating webhook keeps the request immutable
// afterwards. Whether a user may recreate the pod's containers at all is
// the API server's own check (the request-authorization
// ValidatingAdmissionPolicy), which costs the create no call.
type CRRMutator struct {
	// Cache, when set, answers for pods first (see againstPod).
	Cache *PodCache
	// Reader reads pods from the API server.
	Reader client.Reader
	// Policies reads the RecreatePolicies the manager's requests are made for.
	Policies client.Reader
	// Requests reads the active requests of the request's pod.
	Requests client.Reader
	// Self is the manager's own user name.
	Self string
	// Pause is the emergency stop: while paused, no request is admitted.
	Pause   *pause.Switch
	Decoder admission.Decoder
}

// Handle implements admission.Handler.
func (m *CRRMutator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create {
		return admission.Allowed("")
	}
	crr, err := decodeRequest(m.Decoder, req)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	paused, err := m.Pause.Read(ctx)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("admit ContainerRecreateRequest %s: %w", displayName(crr), err))
	}
	if paused.Paused {
		return admission.Denied(fmt.Sprintf("ContainerRecreateRequest %s not created: %s; kubectl rejuv resume --all resumes", displayName(crr), paused.Cause))
	}
	if errs := append(systemOwnedFields(crr), containerCountErrors(&crr.Spec)...); len(errs) > 0 {
		return invalid(displayName(crr), errs)
	}
	mutated := crr.DeepCopy()
	defaultStrategy(mutated)
	annotateContainers(mutated)
	mutated.Annotations[v1beta1.RequestedAtAnnotation] = time.Now().UTC().Format(time.RFC3339Nano)
	var errs field.ErrorList
	var pod *corev1.Pod
	if crr.Spec.PodName != "" {
		pod, errs, err = m.againstPod(ctx, mutated, req.Namespace)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, fmt.Errorf("admit ContainerRecreateRequest %s: %w", displayName(crr), err))
		}
	}
	if errs = append(validateSpec(&mutated.Spec), errs...); len(errs) > 0 {
		return invalid(displayName(crr), errs)
	}
	if errs = sizeErrors(mutated); len(errs) > 0 {
		return invalid(displayName(crr), errs)
	}
	errs, err = m.activeRequestErrors(ctx, mutated, req.Namespace)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("admit ContainerRecreateRequest %s: %w", displayName(crr), err))
	}
	if len(errs) > 0 {
		return invalid(displayName(crr), errs)
	}
	if m.Self != "" && req.UserInfo.Username == m.Self {
		if denied := ownRequestDenial(ctx, m.Policies, crr, req.Namespace, pod); denied != nil {
			return *denied
		}
	}
	raw, err := encodeRequest(req, mutated)
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, fmt.Errorf("encode ContainerRecreateRequest %s: %w", displayName(crr), err))
	}
	return admission.PatchResponseFromRaw(req.Object.Raw, raw)
}

// systemOwnedFields rejects what only the webhook may set.
func systemOwnedFields(crr *v1beta1.ContainerRecreateRequest) field.ErrorList {
	var errs field.ErrorList
	for i, c := range crr.Spec.Containers {
		p := field.NewPath("spec", "containers").Index(i)
		if c.StatusContext != nil {
			errs = append(errs, field.Forbidden(p.Child("statusContext"), "is recorded from the pod's status when the request is created; it cannot be set"))
		}
		if c.PreStop != nil {
			errs = append(errs, field.Forbidden(p.Child("preStop"), "is copied from the pod's container spec; it cannot be set"))
		}
		if c.Ports != nil {
			errs = append(errs, field.Forbidden(p.Child("ports"), "are copied from the pod's container spec; they cannot be set"))
		}
	}
	return errs
}

func defaultStrategy(crr *v1beta1.ContainerRecreateRequest) {
	if crr.Spec.Strategy == nil {
		crr.Spec.Strategy = &v1beta1.ContainerRecreateRequestStrategy{}
	}
	if crr.Spec.Strategy.FailurePolicy == "" {
		crr.Spec.Strategy.FailurePolicy = v1beta1.FailurePolicyFail
	}
}

// annotateContainers lists the container names for the CONTAINERS column.
func annotateContainers(crr *v1beta1.ContainerRecreateRequest) {
	names := make([]string, 0, len(crr.Spec.Containers))
	for _, c := range crr.Spec.Containers {
		names = append(names, c.Name)
	}
	if crr.Annotations == nil {
		crr.Annotations = map[string]string{}
	}
	crr.Annotations[v1beta1.ContainersAnnotation] = strings.Join(names, ",")
}

// fromPod copies the pod's identity, node and container details into the
// request.
func fromPod(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) {
	if crr.Labels == nil {
		crr.Labels = map[string]string{}
	}
	crr.Labels[v1beta1.PodUIDLabel] = string(pod.UID)
	// A name longer than a label value may be gets no label, rather than
	// a refusal of its request or a label that names another pod.
	if len(validation.IsValidLabelValue(pod.Name)) == 0 {
		crr.Labels[v1beta1.PodNameLabel] = pod.Name
	} else {
		delete(crr.Labels, v1beta1.PodNameLabel)
	}
	if pod.Spec.NodeName != "" {
		crr.Labels[v1beta1.NodeNameLabel] = pod.Spec.NodeName
	}
	crr.Labels[v1beta1.ActiveLabel] = "true"
	// A pod's grace over the request's bound is not taken (nor cut):
	// validateAgainstPod refuses the request, which must set one.
	if grace := podGrace(pod); crr.Spec.Strategy.TerminationGracePeriodSeconds == nil && grace <= v1beta1.MaxGracePeriodSeconds {
		crr.Spec.Strategy.TerminationGracePeriodSeconds = &grace
	}
	for i := range crr.Spec.Containers {
		c := &crr.Spec.Containers[i]
		found := pods.FindContainer(pod, c.Name)
		if found.Kind == pods.ContainerMissing {
			continue
		}
		spec := found.Spec
		if spec.Lifecycle != nil && spec.Lifecycle.PreStop != nil {
			h := spec.Lifecycle.PreStop
			c.PreStop = &v1beta1.ProbeHandler{Exec: h.Exec, HTTPGet: h.HTTPGet, TCPSocket: h.TCPSocket, Sleep: h.Sleep}
		}
		if len(spec.Ports) > 0 {
			c.Ports = spec.Ports
		}
		if st := pods.ContainerStatus(pod, c.Name); st != nil && st.ContainerID != "" {
			c.StatusContext = &v1beta1.ContainerRecreateRequestContainerContext{ContainerID: st.ContainerID, RestartCount: st.RestartCount}
		}
	}
}

// podGrace is the pod's terminationGracePeriodSeconds, which a request
// takes when it sets none.
func podGrace(pod *corev1.Pod) int64 {
	if pod.Spec.TerminationGracePeriodSeconds != nil {
		return *pod.Spec.TerminationGracePeriodSeconds
	}
	return defaultTerminationGracePeriodSeconds
}

// displayName names a request that may only have a generateName so far.
func displayName(crr *v1beta1.ContainerRecreateRequest) string {
	if crr.Name != "" {
		return crr.Name
	}
	return crr.GenerateName
}
