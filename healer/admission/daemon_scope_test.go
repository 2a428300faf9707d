package admission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestDaemonScope(t *testing.T) {
	s, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	const daemon = "system:serviceaccount:rejuv-system:rejuv-daemon"
	d := &DaemonScope{DaemonUser: daemon, Decoder: admission.NewDecoder(s)}
	crr := &v1beta1.ContainerRecreateRequest{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps.kruise.io/v1beta1", Kind: "ContainerRecreateRequest"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "r", Labels: map[string]string{v1beta1.NodeNameLabel: "node-a"}},
	}
	raw, err := json.Marshal(crr)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		user    string
		node    []string
		allowed bool
		want    string
	}{
		{"daemon of the request's node", daemon, []string{"node-a"}, true, ""},
		{"daemon of another node", daemon, []string{"node-b"}, false, daemon + " from node node-b may not update the status of ContainerRecreateRequest shop/r, which belongs to node node-a"},
		{"daemon token without a node", daemon, nil, false, "from a token not bound to a node"},
		{"the manager or an admin", "system:serviceaccount:rejuv-system:rejuv-healer", nil, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			user := authenticationv1.UserInfo{Username: tt.user}
			if tt.node != nil {
				user.Extra = map[string]authenticationv1.ExtraValue{NodeNameExtra: tt.node}
			}
			resp := d.Handle(context.Background(), admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
				Operation: admissionv1.Update, SubResource: "status", UserInfo: user,
				Object: runtime.RawExtension{Raw: raw}, OldObject: runtime.RawExtension{Raw: raw},
			}})
			if resp.Allowed != tt.allowed {
				t.Fatalf("allowed = %v, want %v (%v)", resp.Allowed, tt.allowed, resp.Result)
			}
			if tt.want != "" && !strings.Contains(resp.Result.Message, tt.want) {
				t.Errorf("message %q lacks %q", resp.Result.Message, tt.want)
			}
		})
	}
}
