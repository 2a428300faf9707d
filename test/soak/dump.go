package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// dumpObjects writes the soak's policies, requests, pods and budgets as
// they are at the end to objects.yaml in dir, for a run that failed: the
// namespaces are removed after.
func dumpObjects(ctx context.Context, c client.Client, dir string) error {
	f, err := os.Create(filepath.Join(dir, "objects.yaml"))
	if err != nil {
		return err
	}
	defer f.Close()
	for _, a := range fleet() {
		for _, list := range []client.ObjectList{&v1alpha1.RecreatePolicyList{}, &v1beta1.ContainerRecreateRequestList{}, &corev1.PodList{}, &policyv1.PodDisruptionBudgetList{}} {
			if err := c.List(ctx, list, client.InNamespace(a.namespace)); err != nil {
				return fmt.Errorf("list %T in %s: %w", list, a.namespace, err)
			}
			b, err := yaml.Marshal(list)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintf(f, "# %s: %T\n%s---\n", a.namespace, list, b); err != nil {
				return err
			}
		}
	}
	return nil
}
