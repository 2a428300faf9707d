package admission

import (
	"context"
	"fmt"
	"strconv"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// NodeNameExtra is where the API server puts, for a token bound to a pod,
// the name of that pod's node.
const NodeNameExtra = "authentication.kubernetes.io/node-name"

// DaemonScopeName names the ValidatingAdmissionPolicy that keeps the daemon
// to its own node's requests, and its binding.
const DaemonScopeName = "rejuv-daemon-scope"

// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingadmissionpolicies;validatingadmissionpolicybindings,verbs=get;create;update

// DaemonScope returns the ValidatingAdmissionPolicy, and its binding, that
// let the daemon's service account (user, system:serviceaccount:NAMESPACE:NAME)
// write the status only of the requests of the node its token was issued
// on, so that a daemon's credentials cannot disturb other nodes' requests.
// The API server evaluates it itself: a status write costs no call to a
// webhook.
func DaemonScope(user string) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	node := "oldObject.metadata.labels[?" + strconv.Quote(v1beta1.NodeNameLabel) + "].orValue('')"
	tokenNodes := "(has(request.userInfo.extra) ? request.userInfo.extra[?" + strconv.Quote(NodeNameExtra) + "].orValue([]) : [])"
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: DaemonScopeName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: ptr.To(admissionregistrationv1.Fail),
			MatchConstraints: &admissionregistrationv1.MatchResources{
				ResourceRules: []admissionregistrationv1.NamedRuleWithOperations{{
					RuleWithOperations: admissionregistrationv1.RuleWithOperations{
						Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
						Rule: admissionregistrationv1.Rule{
							APIGroups: []string{v1beta1.GroupVersion.Group}, APIVersions: []string{"*"},
							Resources: []string{"containerrecreaterequests/status"},
						},
					},
				}},
			},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "daemon", Expression: "request.userInfo.username == " + strconv.Quote(user),
			}},
			Validations: []admissionregistrationv1.Validation{{
				Expression: tokenNodes + " == [" + node + "]",
				MessageExpression: "request.userInfo.username + ' from ' + " +
					"(size(" + tokenNodes + ") == 1 ? 'node ' + " + tokenNodes + "[0] : 'a token not bound to a node') + " +
					"' may not update the status of ContainerRecreateRequest ' + oldObject.metadata.namespace + '/' + oldObject.metadata.name + " +
					"', which belongs to node ' + " + node,
				Reason: ptr.To(metav1.StatusReasonForbidden),
			}},
		},
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: metav1.ObjectMeta{Name: DaemonScopeName},
		Spec: admissionregistrationv1.ValidatingAdmissionPolicyBindingSpec{
			PolicyName:        DaemonScopeName,
			ValidationActions: []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny},
		},
	}
	return policy, binding
}

// ApplyDaemonScope creates or updates the daemon-scope policy and binding
// for user.
func ApplyDaemonScope(ctx context.Context, c client.Client, user string) error {
	wantPolicy, wantBinding := DaemonScope(user)
	policy := &admissionregistrationv1.ValidatingAdmissionPolicy{ObjectMeta: metav1.ObjectMeta{Name: wantPolicy.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, policy, func() error { policy.Spec = wantPolicy.Spec; return nil }); err != nil {
		return fmt.Errorf("apply ValidatingAdmissionPolicy %s: %w", policy.Name, err)
	}
	binding := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{ObjectMeta: metav1.ObjectMeta{Name: wantBinding.Name}}
	if _, err := controllerutil.CreateOrUpdate(ctx, c, binding, func() error { binding.Spec = wantBinding.Spec; return nil }); err != nil {
		return fmt.Errorf("apply ValidatingAdmissionPolicyBinding %s: %w", binding.Name, err)
	}
	return nil
}
