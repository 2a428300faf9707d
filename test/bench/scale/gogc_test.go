package scale

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/test/deploy"
)

// setManagerGOGC sets the manager container's GOGC and waits until its
// replicas run with it and the webhooks answer.
func setManagerGOGC(ctx context.Context, gogc string) error {
	d, err := stack.Kube.AppsV1().Deployments(deploy.Namespace).Get(ctx, deploy.HealerDeployment, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("set the manager's GOGC: %w", err)
	}
	c := &d.Spec.Template.Spec.Containers[0]
	env := []corev1.EnvVar{{Name: "GOGC", Value: gogc}}
	for _, e := range c.Env {
		if e.Name != "GOGC" {
			env = append(env, e)
		}
	}
	c.Env = env
	if _, err := stack.Kube.AppsV1().Deployments(deploy.Namespace).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("set the manager's GOGC: %w", err)
	}
	return stack.WaitReady(ctx)
}
