package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// settle suspends the soak's scheduled policies, so that no run starts,
// and waits up to limit until every request has ended and every app has
// its pods Ready: what is left then is a promise broken ("never stuck").
// The rules' policies go on: a pod the load made unready last is
// recreated by them. The suspension is tried again within limit: the
// last fault may leave the webhooks a moment without a replica.
func settle(ctx context.Context, c client.Client, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for _, a := range fleet() {
		for _, p := range a.policies {
			if p.Spec.Schedule == nil {
				continue
			}
			key := client.ObjectKey{Namespace: a.namespace, Name: p.Name}
			var lastErr error
			err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
				lastErr = retry.RetryOnConflict(retry.DefaultRetry, func() error {
					got := &v1alpha1.RecreatePolicy{}
					if err := c.Get(ctx, key, got); err != nil {
						return err
					}
					got.Spec.Suspend = true
					return c.Update(ctx, got)
				})
				return lastErr == nil, nil
			})
			if err != nil {
				return fmt.Errorf("suspend policy %s within %s: %w", key, limit, lastErr)
			}
		}
	}
	// last is what the last complete look found unsettled.
	var last []string
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var left []string
		failed := false
		for _, a := range fleet() {
			requests := &v1beta1.ContainerRecreateRequestList{}
			if err := c.List(ctx, requests, client.InNamespace(a.namespace)); err != nil {
				failed = true
				continue
			}
			for _, r := range requests.Items {
				if r.Status.Phase != v1beta1.PhaseCompleted {
					left = append(left, fmt.Sprintf("request %s/%s %s", r.Namespace, r.Name, r.Status.Phase))
				}
			}
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: a.namespace, Name: a.name}, d); err != nil {
				failed = true
				continue
			}
			if d.Status.ReadyReplicas != *d.Spec.Replicas || d.Status.Replicas != *d.Spec.Replicas {
				left = append(left, fmt.Sprintf("deployment %s/%s %d of %d Ready", a.namespace, a.name, d.Status.ReadyReplicas, *d.Spec.Replicas))
			}
		}
		if failed {
			return false, nil
		}
		last = left
		return len(left) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("not settled within %s: %s", limit, strings.Join(last, "; "))
	}
	return nil
}
