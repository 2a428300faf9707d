package e2e

import (
	"context"
	"errors"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// TestShippedIdentitiesAsImpersonated takes each action of the rights
// table (identityActs) as the shipped service account itself, impersonated
// with its groups: reads for real, writes as dry runs, so that the whole
// chain answers (authorization, then the shipped admission policies). An
// action the table allows is not forbidden (it may meet a missing object
// or an invalid body after it was let through); one it refuses is.
// Actions that are not API verbs (create-for-policy, update-any-node) are
// checks the code and admission policies make, asked by
// TestShippedRolesGrantOnlyWhatTheCodeUses.
func TestShippedIdentitiesAsImpersonated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	taken := 0
	// How the actions let through ended, for the log: done, or stopped
	// after authorization (a missing object, an invalid body).
	outcomes := map[string]int{}
	for _, tt := range identityActs() {
		cfg := rest.CopyConfig(restCfg)
		cfg.Impersonate = rest.ImpersonationConfig{UserName: tt.user, Groups: saGroups}
		dyn, err := dynamic.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range tt.acts {
			// The resource metrics API is served only once metrics-server
			// is installed (the memory tests install it when they run):
			// its lines are the SubjectAccessReview test's alone.
			if !apiVerbs[a.verb] || a.group == "metrics.k8s.io" {
				continue
			}
			gvk, err := mapper.KindFor(schema.GroupVersionResource{Group: a.group, Resource: a.resource})
			if err != nil {
				t.Fatalf("%s: %v", a, err)
			}
			err = take(ctx, dyn.Resource(gvk.GroupVersion().WithResource(a.resource)).Namespace(a.namespace), gvk, a)
			taken++
			if a.allowed {
				outcome := "done"
				if err != nil {
					outcome = string(apierrors.ReasonForError(err))
				}
				outcomes[outcome]++
			}
			switch {
			case a.allowed && apierrors.IsForbidden(err):
				t.Errorf("%s: %s forbidden, want it let through: %v", tt.user, a, err)
			case !a.allowed && !apierrors.IsForbidden(err):
				t.Errorf("%s: %s answered %v, want it forbidden", tt.user, a, err)
			}
		}
	}
	t.Logf("%d actions taken as the shipped identities; those let through ended: %v", taken, outcomes)
	if taken < 30 {
		t.Errorf("premise: %d actions taken as the shipped identities, want the table's (30 or more)", taken)
	}
}

// apiVerbs are the verbs an impersonated client can take.
var apiVerbs = map[string]bool{"get": true, "list": true, "watch": true, "create": true, "update": true, "patch": true, "delete": true}

// take does a as the client r, writes as dry runs.
func take(ctx context.Context, r dynamic.ResourceInterface, gvk schema.GroupVersionKind, a act) error {
	dry := []string{metav1.DryRunAll}
	var sub []string
	if a.subresource != "" {
		sub = []string{a.subresource}
	}
	name := a.name
	if name == "" {
		name = "impersonation-probe"
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetName(name)
	obj.SetNamespace(a.namespace)
	var err error
	switch a.verb {
	case "get":
		_, err = r.Get(ctx, name, metav1.GetOptions{}, sub...)
	case "list":
		_, err = r.List(ctx, metav1.ListOptions{Limit: 1})
	case "watch":
		timeout := int64(1)
		w, werr := r.Watch(ctx, metav1.ListOptions{TimeoutSeconds: &timeout})
		if werr == nil {
			w.Stop()
		}
		err = werr
	case "create":
		_, err = r.Create(ctx, obj, metav1.CreateOptions{DryRun: dry}, sub...)
	case "update":
		_, err = r.Update(ctx, obj, metav1.UpdateOptions{DryRun: dry}, sub...)
	case "patch":
		_, err = r.Patch(ctx, name, types.MergePatchType, []byte("{}"), metav1.PatchOptions{DryRun: dry}, sub...)
	case "delete":
		err = r.Delete(ctx, name, metav1.DeleteOptions{DryRun: dry}, sub...)
	default:
		err = errors.New("not an API verb")
	}
	return err
}
