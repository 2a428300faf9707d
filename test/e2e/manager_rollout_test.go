package e2e

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// TestWebhooksAnswerThroughAManagerRollout: while the manager's Deployment
// rolls out new replicas (as an upgrade or `kubectl rollout restart`
// does), a user writes a RecreatePolicy every 100 ms, each one going
// through the validating webhook: every write is answered, none fails
// because the API server called a replica that had already gone. Not
// parallel: the manager restarts.
func TestWebhooksAnswerThroughAManagerRollout(t *testing.T) {
	disturbs(t)
	s := rejuvStack(t)
	ctx := context.Background()
	ns := newNamespace(t)
	before := managerPodUIDs(t, s)

	var (
		mu       sync.Mutex
		writes   int
		failures []string
	)
	stop := every(100*time.Millisecond, func() {
		p := &v1alpha1.RecreatePolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "during-rollout"},
			Spec: v1alpha1.RecreatePolicySpec{
				Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "none"}},
				Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"},
			},
		}
		err := s.Client.Create(ctx, p, client.DryRunAll)
		mu.Lock()
		defer mu.Unlock()
		writes++
		if err != nil {
			failures = append(failures, fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
		}
	})
	defer stop()

	// The premise: the writes reach the webhooks before the rollout.
	waitFor(t, "ten writes before the rollout", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return writes >= 10
	})
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{"e2e.rejuv.dev/restarted":%q}}}}}`, time.Now().Format(time.RFC3339Nano))
	if _, err := s.Kube.AppsV1().Deployments(deploy.Namespace).Patch(ctx, deploy.HealerDeployment, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	// And a little while after, as the last old replica is gone.
	time.Sleep(3 * time.Second)
	stop()

	after := managerPodUIDs(t, s)
	for uid, name := range after {
		if before[uid] != "" {
			t.Fatalf("manager pod %s was not replaced by the rollout (before %v, after %v)", name, before, after)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d writes through the webhook during the rollout, %d failed", writes, len(failures))
	if writes < 50 {
		t.Errorf("only %d writes during the rollout, want at least 50 to cover it", writes)
	}
	if len(failures) > 0 {
		t.Errorf("%d of %d writes failed during the rollout, the first:\n%s", len(failures), writes, failures[0])
	}
}

// managerPodUIDs are the manager's pods, not being deleted, by UID.
func managerPodUIDs(t *testing.T, s *deploy.Stack) map[types.UID]string {
	t.Helper()
	pods, err := s.Pods(context.Background(), deploy.HealerSelector)
	if err != nil {
		t.Fatal(err)
	}
	out := map[types.UID]string{}
	for _, p := range pods {
		out[p.UID] = p.Name
	}
	if len(out) == 0 {
		t.Fatal("no manager pod")
	}
	return out
}
