package plugin

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestRestartOfAPolicyTheManagerWritesMeanwhile plays kubectl rejuv restart
// rp/NAME while the manager writes the policy's status between the
// command's read and its write (it does after every pass, and a loaded
// cluster widens the gap): the command reads the policy again and sets
// restartAt on it, instead of failing with a conflict. When the manager's
// write started a run meanwhile, the command refuses as it would have at
// first.
func TestRestartOfAPolicyTheManagerWritesMeanwhile(t *testing.T) {
	scheme, err := newScheme()
	if err != nil {
		t.Fatal(err)
	}
	at := metav1.NewTime(time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC))
	for _, tc := range []struct {
		name    string
		manager func(*v1alpha1.RecreatePolicy)
		want    string
	}{
		{"a pass", func(p *v1alpha1.RecreatePolicy) { p.Status.LastEvaluationTime = &at }, ""},
		{"a run started", func(p *v1alpha1.RecreatePolicy) {
			p.Status.Run = &v1alpha1.Run{ScheduledTime: at, State: v1alpha1.RunRunning, Pods: 2}
		}, "is in the middle of a rolling restart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stored := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "nightly"},
				Spec: v1alpha1.RecreatePolicySpec{Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"}}}
			updates := 0
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(stored).WithStatusSubresource(stored).
				WithInterceptorFuncs(interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					updates++
					if updates == 1 {
						// The manager's status write lands first.
						cur := &v1alpha1.RecreatePolicy{}
						if err := c.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
							return err
						}
						tc.manager(cur)
						if err := c.Status().Update(ctx, cur); err != nil {
							return err
						}
					}
					return c.Update(ctx, obj, opts...)
				}}).Build()
			read := &v1alpha1.RecreatePolicy{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(stored), read); err != nil {
				t.Fatal(err)
			}
			change := func(p *v1alpha1.RecreatePolicy) error {
				if err := restartable(p); err != nil {
					return err
				}
				p.Spec.RestartAt = &at
				return nil
			}
			if err := change(read); err != nil {
				t.Fatal(err)
			}
			r := &restart{manager: "kubectl-rejuv"}
			err := r.write(context.Background(), &clients{client: c}, read, "restarted", dryRunNone, change)

			got := &v1alpha1.RecreatePolicy{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(stored), got); err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if err != nil || updates != 2 || got.Spec.RestartAt == nil || !got.Spec.RestartAt.Equal(&at) || got.Status.LastEvaluationTime == nil {
					t.Fatalf("write: %v after %d updates; stored restartAt %v, status %+v; want restartAt %s on the manager's status", err, updates, got.Spec.RestartAt, got.Status, at)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || got.Spec.RestartAt != nil {
				t.Fatalf("write: %v, stored restartAt %v; want %q and nothing written", err, got.Spec.RestartAt, tc.want)
			}
		})
	}
}
