package config

import (
	"maps"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apiserver/pkg/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
)

// TestStatusAnnotationsPolicyKeepsV1alpha1WritesOffTheStatus: a v1alpha1
// create or update of the main resource that sets, changes or removes an
// annotation carrying status is refused, whoever makes it (the API server
// would store it as the status: an editor made the daemon skip a preStop
// hook and kill the container this way); one that leaves them as they are
// is admitted.
func TestStatusAnnotationsPolicyKeepsV1alpha1WritesOffTheStatus(t *testing.T) {
	p := shippedPolicies(t)["status-annotations"]
	if p == nil {
		t.Fatal("config/admission has no policy status-annotations")
	}
	rules := p.policy.Spec.MatchConstraints.ResourceRules
	if mp := p.policy.Spec.MatchConstraints.MatchPolicy; mp == nil || *mp != admissionregistrationv1.Exact || len(rules) != 1 ||
		!slices.Equal(rules[0].APIVersions, []string{"v1alpha1"}) || !slices.Equal(rules[0].Resources, []string{"containerrecreaterequests"}) ||
		!slices.Equal(rules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update}) {
		t.Errorf("status-annotations matches %+v, want creates and updates of containerrecreaterequests made in v1alpha1 alone (matchPolicy Exact)", p.policy.Spec.MatchConstraints)
	}
	if p.policy.Spec.ParamKind != nil || p.binding.Spec.ParamRef != nil {
		t.Error("status-annotations takes a parameter; it needs none")
	}

	editor := person("editor")
	status := map[string]string{
		"rejuv.dev/reason":                    "leak",
		"rejuv.dev/prestop-started":           `{"app":"2026-11-21T10:00:00Z"}`,
		"rejuv.dev/result":                    "Succeeded",
		"crr.apps.kruise.io/unready-acquired": "2026-11-21T10:00:00Z",
	}
	with := func(k, v string) map[string]string {
		a := maps.Clone(status)
		if v == "" {
			delete(a, k)
		} else {
			a[k] = v
		}
		return a
	}
	for _, k := range v1alpha1.StatusAnnotations() {
		t.Run(k, func(t *testing.T) {
			forged := with(k, "forged")
			update := write{operation: admission.Update, object: crr("v1alpha1", "web-x", forged), old: crr("v1alpha1", "web-x", status), user: editor, allowed: []string{"*"}}
			want := "editor may not change " + k + " of v1alpha1 ContainerRecreateRequest shop/web-x: in v1alpha1 these annotations carry the request's status, which only its status subresource writes"
			if got := judge(t, p, update, nil); got != want {
				t.Errorf("update that sets %s:\n got %q\nwant %q", k, got, want)
			}
			if _, had := status[k]; had {
				removed := write{operation: admission.Update, object: crr("v1alpha1", "web-x", with(k, "")), old: crr("v1alpha1", "web-x", status), user: editor}
				if got := judge(t, p, removed, nil); !strings.Contains(got, "may not change "+k+" ") {
					t.Errorf("update that removes %s: %q, want refused", k, got)
				}
			}
			create := write{operation: admission.Create, object: crr("v1alpha1", "web-y", map[string]string{k: "forged"}), user: editor}
			if got := judge(t, p, create, nil); !strings.Contains(got, "editor may not set "+k+" of v1alpha1 ContainerRecreateRequest shop/web-y") {
				t.Errorf("create that sets %s: %q, want refused", k, got)
			}
		})
	}

	labelled := crr("v1alpha1", "web-x", status)
	labelled.SetLabels(map[string]string{"team": "shop"})
	for _, w := range []write{
		{operation: admission.Update, object: labelled, old: crr("v1alpha1", "web-x", status), user: editor},
		{operation: admission.Update, object: crr("v1alpha1", "web-x", with("rejuv.dev/reason", "")), old: crr("v1alpha1", "web-x", status), user: editor},
		{operation: admission.Create, object: crr("v1alpha1", "web-y", map[string]string{"rejuv.dev/reason": "leak"}), user: editor},
		{operation: admission.Create, object: crr("v1alpha1", "web-y", nil), user: editor},
	} {
		if got := judge(t, p, w, nil); got != "" {
			t.Errorf("%s that leaves the status annotations alone: refused with %q", w.operation, got)
		}
	}
}
