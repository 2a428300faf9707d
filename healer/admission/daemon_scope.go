package admission

import (
	"context"
	"fmt"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// NodeNameExtra is where the API server puts, for a token bound to a pod,
// the name of that pod's node.
const NodeNameExtra = "authentication.kubernetes.io/node-name"

// +kubebuilder:webhook:path=/validate-apps-kruise-io-v1beta1-containerrecreaterequest-status,mutating=false,failurePolicy=fail,sideEffects=None,groups=apps.kruise.io,resources=containerrecreaterequests/status,verbs=update,versions=v1beta1,name=vcrr-status.rejuv.dev,admissionReviewVersions=v1,matchPolicy=Equivalent

// DaemonScope lets the daemon's service account write the status only of
// the requests of the node its token was issued on, so that a daemon's
// credentials cannot disturb other nodes' requests.
type DaemonScope struct {
	// DaemonUser is the daemon's user name,
	// system:serviceaccount:NAMESPACE:NAME.
	DaemonUser string
	Decoder    admission.Decoder
}

// Handle implements admission.Handler.
func (d *DaemonScope) Handle(_ context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Update || req.UserInfo.Username != d.DaemonUser {
		return admission.Allowed("")
	}
	old := &v1beta1.ContainerRecreateRequest{}
	if err := d.Decoder.DecodeRaw(req.OldObject, old); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode ContainerRecreateRequest: %w", err))
	}
	target := old.Labels[v1beta1.NodeNameLabel]
	nodes := req.UserInfo.Extra[NodeNameExtra]
	if len(nodes) == 1 && nodes[0] == target {
		return admission.Allowed("")
	}
	from := "a token not bound to a node"
	if len(nodes) == 1 {
		from = "node " + nodes[0]
	}
	resp := admission.Denied(fmt.Sprintf("%s from %s may not update the status of ContainerRecreateRequest %s/%s, which belongs to node %s",
		req.UserInfo.Username, from, old.Namespace, old.Name, target))
	resp.Result.Code = http.StatusForbidden
	return resp
}
