package recreatepolicy

import (
	"context"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/policy"
)

// TestADeletedRequestGivesItsChargeBack: a request deleted before it
// completed (by hand, or by the garbage collector once its policy is
// gone) gives back the disruption it was charged, rather than the budget
// counting its pod disrupted until the disruption controller's two-minute
// timeout, with a NotDeleted warning on a pod that was never deleted.
func TestADeletedRequestGivesItsChargeBack(t *testing.T) {
	needsAPIServer(t)
	ctx := context.Background()
	for _, policyGone := range []bool{false, true} {
		name := "deleted by hand"
		if policyGone {
			name = "deleted after its policy"
		}
		t.Run(name, func(t *testing.T) {
			ns := newNamespace(t)
			startManager(t, &Reconciler{Engine: policy.NewEngine(policy.Options{})}, ns)
			pods := createPods(t, ns, "web", 3, time.Now().Add(-time.Hour))
			pdb := createPDB(t, ns, "web", policyv1.PodDisruptionBudgetSpec{MaxUnavailable: new(intstr.FromInt32(1))})
			setPDBStatus(t, pdb, 3, 2, 3)
			spec := rulePolicy("web", annotated)
			spec.Limits.MaxMatchingPercent = new(int32(100))
			p := createPolicy(t, ns, "p", spec)
			annotate(t, pods[0])

			var crr appsv1beta1.ContainerRecreateRequest
			created := func(context.Context) (bool, error) {
				crrs := requestsOf(t, p)
				if len(crrs) == 1 {
					crr = crrs[0]
				}
				return len(crrs) == 1, nil
			}
			if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, created); err != nil {
				t.Fatalf("no request for annotated pod %s", pods[0].Name)
			}
			charged := func(want bool) func(context.Context) (bool, error) {
				return func(ctx context.Context) (bool, error) {
					live := &policyv1.PodDisruptionBudget{}
					if err := admin.Get(ctx, client.ObjectKeyFromObject(pdb), live); err != nil {
						return false, err
					}
					_, ok := live.Status.DisruptedPods[pods[0].Name]
					return ok == want, nil
				}
			}
			if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, charged(true)); err != nil {
				t.Fatalf("the budget was not charged for %s's request %s: %v", pods[0].Name, crr.Name, err)
			}

			// The rule stops matching, so that no new request charges the
			// budget again; then the request goes before it completed.
			unannotate(t, pods[0])
			if policyGone {
				if err := admin.Delete(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			if err := admin.Delete(ctx, &crr); err != nil && !apierrors.IsNotFound(err) {
				t.Fatal(err)
			}
			if err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 20*time.Second, true, charged(false)); err != nil {
				t.Errorf("the budget still counts %s disrupted 20 s after its request %s was deleted: %v", pods[0].Name, crr.Name, err)
			}
		})
	}
}
