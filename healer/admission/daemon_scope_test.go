package admission

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// The API server itself keeps the daemon to its node's requests, through
// the ValidatingAdmissionPolicy the manager applies.
func TestDaemonScope(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	const daemon = "system:serviceaccount:rejuv-system:rejuv-daemon"
	if err := ApplyDaemonScope(ctx, admin, daemon); err != nil {
		t.Fatal(err)
	}
	// Applying again (a manager restart) updates in place.
	if err := ApplyDaemonScope(ctx, admin, daemon); err != nil {
		t.Fatal(err)
	}
	ns := newNamespace(t)
	createPod(t, ns, "web", nil)
	crr := newCRR(ns, "scoped", "app")
	crr.Spec.Containers[0].StatusContext = nil
	if err := admin.Create(ctx, crr); err != nil {
		t.Fatal(err)
	}
	as := func(user string, nodes ...string) client.Client {
		cfg := rest.CopyConfig(restCfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:masters"}}
		if nodes != nil {
			cfg.Impersonate.Extra = map[string][]string{NodeNameExtra: nodes}
		}
		c, err := client.New(cfg, client.Options{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	write := func(c client.Client, message string) error {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := admin.Get(ctx, clientKey(crr), cur); err != nil {
			t.Fatal(err)
		}
		cur.Status.Message = message
		return c.Status().Update(ctx, cur)
	}
	// The API server compiles a new policy in the background: wait for it
	// to refuse the other node's daemon.
	other := as(daemon, "node-b")
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := write(other, "from node-b")
		if err != nil {
			want := daemon + " from node node-b may not update the status of ContainerRecreateRequest " + ns + "/scoped, which belongs to node " + testNode
			if !strings.Contains(err.Error(), want) {
				t.Fatalf("error %q lacks %q", err, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the daemon of another node could still write the status after 30s")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := write(as(daemon), "unbound"); err == nil || !strings.Contains(err.Error(), "from a token not bound to a node may not update") {
		t.Errorf("a daemon token without a node: %v, want refused", err)
	}
	if err := write(as(daemon, testNode), "own node"); err != nil {
		t.Errorf("the daemon of the request's node: %v", err)
	}
	if err := write(as("system:serviceaccount:rejuv-system:rejuv-healer"), "manager"); err != nil {
		t.Errorf("the manager: %v", err)
	}
}
