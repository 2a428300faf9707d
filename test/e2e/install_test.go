package e2e

import (
	"context"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// TestInstallManifestsPassServerDryRun builds config/default as
// `kubectl apply -k` would and has the real API server validate every object
// (schema, admission, RBAC escalation checks) without storing it.
func TestInstallManifestsPassServerDryRun(t *testing.T) {
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, "config", "default"))
	if err != nil {
		t.Fatalf("kustomize build config/default: %v", err)
	}
	c := ctrlClient(t)
	ctx := context.Background()
	kinds := map[string]int{}
	services := map[string]bool{}
	var referenced []string
	var objects []*unstructured.Unstructured
	for _, r := range resources.Resources() {
		m, err := r.Map()
		if err != nil {
			t.Fatal(err)
		}
		objects = append(objects, &unstructured.Unstructured{Object: m})
	}
	// Namespaced objects can be checked only in an existing namespace, and
	// kustomize does not promise to list namespaces first.
	for _, u := range objects {
		if u.GetKind() != "Namespace" {
			continue
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: u.GetName()}}
		if err := c.Create(ctx, ns); err == nil {
			t.Cleanup(func() { _ = c.Delete(context.Background(), ns) })
		} else if !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	for _, u := range objects {
		m := u.Object
		kinds[u.GetKind()]++
		switch u.GetKind() {
		case "Service":
			services[u.GetNamespace()+"/"+u.GetName()] = true
		case "CustomResourceDefinition":
			// Only a CRD with more than one version has a conversion webhook.
			if strategy, _, _ := unstructured.NestedString(m, "spec", "conversion", "strategy"); strategy == "Webhook" {
				ns, _, _ := unstructured.NestedString(m, "spec", "conversion", "webhook", "clientConfig", "service", "namespace")
				name, _, _ := unstructured.NestedString(m, "spec", "conversion", "webhook", "clientConfig", "service", "name")
				referenced = append(referenced, ns+"/"+name)
			}
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			hooks, _, _ := unstructured.NestedSlice(m, "webhooks")
			for _, h := range hooks {
				ns, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "namespace")
				name, _, _ := unstructured.NestedString(h.(map[string]any), "clientConfig", "service", "name")
				referenced = append(referenced, ns+"/"+name)
			}
		case "Namespace":
			continue
		}
		if err := dryRun(ctx, c, u); err != nil {
			t.Errorf("server dry-run of %s %s/%s: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
	}
	for _, ref := range referenced {
		if !services[ref] {
			t.Errorf("a webhook or the CRD conversion calls Service %s, which config/default does not create (services: %v)", ref, services)
		}
	}
	for kind, want := range map[string]int{"Namespace": 1, "CustomResourceDefinition": 2, "Deployment": 1, "DaemonSet": 1, "Service": 1, "ServiceAccount": 2, "ClusterRole": 2,
		"ClusterRoleBinding": 2, "MutatingWebhookConfiguration": 1, "ValidatingWebhookConfiguration": 1} {
		if kinds[kind] != want {
			t.Errorf("config/default has %d %s, want %d (all: %v)", kinds[kind], kind, want, kinds)
		}
	}
}

// dryRun has the API server check u (which it fills in) as the whole
// object: a create, or a replace of what is there (a cluster that ran make demo holds the CRDs
// registered with the demo's URL; merging the manifest into them would
// check a mix of both).
func dryRun(ctx context.Context, c client.Client, u *unstructured.Unstructured) error {
	current := &unstructured.Unstructured{}
	current.SetGroupVersionKind(u.GroupVersionKind())
	err := c.Get(ctx, client.ObjectKeyFromObject(u), current)
	switch {
	case apierrors.IsNotFound(err):
		return c.Create(ctx, u, client.DryRunAll)
	case err != nil:
		return err
	}
	u.SetResourceVersion(current.GetResourceVersion())
	return c.Update(ctx, u, client.DryRunAll)
}
