package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestStatusWritesNeedTheDaemonOrTheManager: with the shipped daemon-scope
// policy, a request's status is written by a token of Rejuv's namespace
// bound to the request's node, or by the manager. A service account whose
// role has apps.kruise.io * * (update-any-node included), on a pod of the
// same node, is refused.
func TestStatusWritesNeedTheDaemonOrTheManager(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	crr := newCRR(ns, "scoped", "app")
	if err := admin.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	writeStatus := rbacv1.PolicyRule{APIGroups: []string{"apps.kruise.io"}, Resources: []string{"containerrecreaterequests", "containerrecreaterequests/status"}, Verbs: []string{"get", "update"}}
	ci := "system:serviceaccount:" + ns + ":ci"
	daemon := "system:serviceaccount:system:daemon"
	grant(t, ns, ci, "kruise-everything", rbacv1.PolicyRule{APIGroups: []string{"apps.kruise.io"}, Resources: []string{"*"}, Verbs: []string{"*"}})
	grant(t, ns, daemon, "daemon", writeStatus)
	grant(t, ns, managerUser, "manager-status", writeStatus)

	write := func(user, node string) error {
		cfg := rest.CopyConfig(restCfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:serviceaccounts", "system:authenticated"}}
		if node != "" {
			cfg.Impersonate.Extra = map[string][]string{"authentication.kubernetes.io/node-name": {node}}
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur := &v1beta1.ContainerRecreateRequest{}
			if err := c.Get(ctx, clientKey(crr), cur); err != nil {
				return err
			}
			cur.Status.Message = "written by " + user
			return c.Status().Update(ctx, cur)
		})
	}
	refusal := ci + " from node " + testNode + " may not update the status of ContainerRecreateRequest " + ns + "/scoped, which belongs to node " + testNode +
		": only that node's daemon may, or Rejuv's manager (healer of namespace system)"
	// The API server loads a new role binding, and an admission policy,
	// within a second or so.
	var err error
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if err = write(ci, testNode); err != nil && strings.Contains(err.Error(), refusal) {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), refusal) {
		t.Errorf("a service account with apps.kruise.io * * on a pod of the node: %v, want refused with %q", err, refusal)
	}
	if err := write(daemon, "node-b"); err == nil || !strings.Contains(err.Error(), daemon+" from node node-b may not update") {
		t.Errorf("the daemon of another node: %v, want refused", err)
	}
	if err := write(daemon, testNode); err != nil {
		t.Errorf("the daemon of the request's node: %v", err)
	}
	if err := write(managerUser, ""); err != nil {
		t.Errorf("the manager, from no node: %v", err)
	}
}
