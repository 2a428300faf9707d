package admission

import (
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/healer/pause"
)

// Paths the webhooks are served on.
const (
	MutateCRRPath   = "/mutate-apps-kruise-io-v1beta1-containerrecreaterequest"
	ValidateCRRPath = "/validate-apps-kruise-io-v1beta1-containerrecreaterequest"
	// PodReadinessGatePath serves the readiness-gate injection in opted-in
	// namespaces; PolicyReadinessGatePath, for the pods a RecreatePolicy
	// selects elsewhere.
	PodReadinessGatePath    = "/mutate-v1-pod-readiness-gate"
	PolicyReadinessGatePath = "/mutate-v1-pod-policy-readiness-gate"
	// ConvertPath serves CRD conversion between v1alpha1 and v1beta1.
	ConvertPath = "/convert"
)

// +kubebuilder:webhook:path=/mutate-apps-kruise-io-v1beta1-containerrecreaterequest,mutating=true,failurePolicy=fail,sideEffects=None,groups=apps.kruise.io,resources=containerrecreaterequests,verbs=create,versions=v1beta1;v1alpha1,name=mcrr.rejuv.dev,admissionReviewVersions=v1,matchPolicy=Equivalent,timeoutSeconds=10
// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-containerrecreaterequest,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps.kruise.io,resources=containerrecreaterequests,verbs=update,versions=v1beta1,name=vcrr.rejuv.dev,admissionReviewVersions=v1,matchPolicy=Equivalent,timeoutSeconds=10
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch

// The CA bundles of the webhooks that exist only when Rejuv executes
// requests: the mutating configuration (requests, pod readiness gates)
// and the CRD's conversion webhook.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,verbs=get;update,resourceNames=mutating-webhook-configuration
// +kubebuilder:rbac:groups=apiextensions.k8s.io,resources=customresourcedefinitions,verbs=get;update,resourceNames=containerrecreaterequests.apps.kruise.io

// Options configure the CRR webhooks.
type Options struct {
	// Reader reads pods from the API server.
	Reader client.Reader
	// Pods, when set, answers the request webhook for pods first.
	Pods *PodCache
	// Client reads the RecreatePolicies the manager's requests are made
	// for.
	Client client.Client
	// Self is the manager's own user name, whose requests a RecreatePolicy
	// must account for instead.
	Self string
	// PolicyOnly serves the RecreatePolicy validation alone, for an
	// install beside OpenKruise, which admits and converts the requests
	// itself.
	PolicyOnly bool
	// Prometheus is set when the manager has a Prometheus for policies'
	// signals.
	Prometheus bool
	// Callers, when set, are the only clients the admission webhooks
	// answer.
	Callers *Callers
	// Pause is the emergency stop, which refuses every new request.
	Pause *pause.Switch
}

// Register adds the RecreatePolicy validation to server and, unless
// o.PolicyOnly, the CRR mutating and validating webhooks, the pod
// readiness-gate injection and the CRD conversion webhook.
func Register(server webhook.Server, scheme *runtime.Scheme, o Options) {
	decoder := admission.NewDecoder(scheme)
	admit := func(path string, h admission.Handler) {
		initRefusals(path)
		server.Register(path, o.Callers.admit(&webhook.Admission{Handler: counted{path: path, Handler: h}}))
	}
	admit(ValidatePolicyPath, &PolicyValidator{Reader: o.Reader, Decoder: decoder, Prometheus: o.Prometheus, VerifiedCallers: o.Callers != nil})
	if o.PolicyOnly {
		return
	}
	admit(MutateCRRPath, &CRRMutator{Cache: o.Pods, Reader: o.Reader, Policies: o.Client, Requests: o.Client, Self: o.Self, Pause: o.Pause, Decoder: decoder})
	admit(ValidateCRRPath, &CRRValidator{Decoder: decoder})
	admit(PodReadinessGatePath, &PodReadinessGateInjector{Decoder: decoder})
	admit(PolicyReadinessGatePath, &PodReadinessGateInjector{Decoder: decoder, Policies: o.Client})
	server.Register(ConvertPath, newConverter(scheme))
}
