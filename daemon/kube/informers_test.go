package kube

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// TestInformersHoldActiveRequestsOfTheNode: the daemon caches the requests
// of its node that have not completed, and lets a request go once the
// manager marks it inactive, so that its memory does not grow with the
// requests kept after completion (ttlSecondsAfterFinished).
func TestInformersHoldActiveRequestsOfTheNode(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: needs the API server (run without -short)")
	}
	ctx := t.Context()
	env, err := harness.EnvtestWithCRDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = env.Stop() }()
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	request := func(name, node string, active bool) *v1beta1.ContainerRecreateRequest {
		labels := map[string]string{v1beta1.NodeNameLabel: node, v1beta1.PodUIDLabel: "uid-" + name}
		if active {
			labels[v1beta1.ActiveLabel] = "true"
		}
		crr := &v1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: labels},
			Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: name, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
		}
		if err := admin.Create(ctx, crr); err != nil {
			t.Fatal(err)
		}
		return crr
	}
	running := request("running", "node-a", true)
	request("done", "node-a", false)
	request("elsewhere", "node-b", true)

	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	in, err := NewInformers(c, "node-a")
	if err != nil {
		t.Fatal(err)
	}
	if !in.Run(ctx) {
		t.Fatal("the caches did not sync")
	}
	names := in.Requests.GetStore().ListKeys
	if got := names(); len(got) != 1 || got[0] != "default/running" {
		t.Fatalf("the daemon of node-a caches %v, want default/running alone", got)
	}
	patch := client.MergeFrom(running.DeepCopy())
	delete(running.Labels, v1beta1.ActiveLabel)
	if err := admin.Patch(ctx, running, patch); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return len(names()) == 0, nil
	})
	if err != nil {
		t.Errorf("after the request was marked inactive the daemon still caches %v", names())
	}
}
