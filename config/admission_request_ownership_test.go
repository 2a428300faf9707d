package config

import (
	"maps"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apiserver/pkg/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// TestRequestOwnershipKeepsThePoliciesMarksToTheManager: whoever may
// create or update a request, unless the manager, is refused when the
// write sets, changes or removes a label or annotation through which a
// policy reads its own requests, or adds an ownerReference to a
// RecreatePolicy; the refusal names it (issue 45, finding 12: a service
// account that may delete one pod exhausted another pod's policy's
// maxPerHour with requests labelled rejuv.dev/policy). The manager's own
// writes, writes that leave them as they are, and the garbage collector
// removing an ownerReference pass.
func TestRequestOwnershipKeepsThePoliciesMarksToTheManager(t *testing.T) {
	p := shippedPolicies(t)["request-ownership"]
	if p == nil {
		t.Fatal("config/admission has no policy request-ownership")
	}
	tenant := serviceAccount("shop", "mine", "")
	manager := serviceAccount(managerAccount.Namespace, managerAccount.Name, "")
	policyRef := map[string]any{"apiVersion": "rejuv.dev/v1alpha1", "kind": "RecreatePolicy", "name": "nightly", "uid": "policy-uid", "controller": true}
	request := func(version string, labels, annotations map[string]string, owners ...map[string]any) *unstructured.Unstructured {
		u := crr(version, "web-x", annotations)
		all := map[string]string{"crr.apps.kruise.io/node-name": "node-a"}
		maps.Copy(all, labels)
		u.SetLabels(all)
		if len(owners) > 0 {
			refs := make([]any, len(owners))
			for i, o := range owners {
				refs[i] = o
			}
			_ = unstructured.SetNestedSlice(u.Object, refs, "metadata", "ownerReferences")
		}
		return u
	}
	marks := map[string]string{v1beta1.PolicyLabel: "nightly", v1beta1.TriggerLabel: "schedule"}
	notes := map[string]string{v1beta1.RunAnnotation: "2026-11-29T03:00:00Z", v1beta1.DisruptionChargedAnnotation: "2026-11-29T03:00:01Z", v1beta1.ReasonAnnotation: "nightly run"}
	for _, version := range []string{"v1alpha1", "v1beta1"} {
		var cases []struct {
			name string
			w    write
			want string
		}
		add := func(name string, w write, want string) {
			cases = append(cases, struct {
				name string
				w    write
				want string
			}{name, w, want})
		}
		for _, k := range v1beta1.ManagerOnlyLabels() {
			add("create with label "+k, write{operation: admission.Create, user: tenant, object: request(version, map[string]string{k: "nightly"}, nil)},
				"system:serviceaccount:shop:mine may not set label "+k+" of ContainerRecreateRequest shop/web-x")
			changed := maps.Clone(marks)
			changed[k] = "forged"
			add("update of label "+k, write{operation: admission.Update, user: tenant, object: request(version, changed, notes, policyRef), old: request(version, marks, notes, policyRef)},
				"may not change label "+k+" of ContainerRecreateRequest shop/web-x")
			removed := maps.Clone(marks)
			delete(removed, k)
			add("removal of label "+k, write{operation: admission.Update, user: tenant, object: request(version, removed, notes, policyRef), old: request(version, marks, notes, policyRef)},
				"may not change label "+k+" ")
		}
		for _, k := range v1beta1.ManagerOnlyAnnotations() {
			add("create with annotation "+k, write{operation: admission.Create, user: tenant, object: request(version, nil, map[string]string{k: "2026-11-29T03:00:00Z"})},
				"system:serviceaccount:shop:mine may not set annotation "+k+" of ContainerRecreateRequest shop/web-x")
			changed := maps.Clone(notes)
			changed[k] = "2026-11-29T04:00:00Z"
			add("update of annotation "+k, write{operation: admission.Update, user: tenant, object: request(version, marks, changed, policyRef), old: request(version, marks, notes, policyRef)},
				"may not change annotation "+k+" ")
		}
		add("create with an ownerReference to a RecreatePolicy", write{operation: admission.Create, user: tenant, object: request(version, nil, nil, policyRef)},
			"may not set an ownerReference to RecreatePolicy nightly of ContainerRecreateRequest shop/web-x")
		add("update that adds an ownerReference to a RecreatePolicy", write{operation: admission.Update, user: tenant, object: request(version, nil, nil, policyRef), old: request(version, nil, nil)},
			"may not change an ownerReference to RecreatePolicy nightly ")

		add("the manager creates a policy's request", write{operation: admission.Create, user: manager, object: request(version, marks, notes, policyRef)}, "")
		add("the manager charges a request", write{operation: admission.Update, user: manager, object: request(version, marks, notes, policyRef), old: request(version, marks, nil, policyRef)}, "")
		add("a request by hand with kubectl rejuv's source and reason", write{operation: admission.Create, user: tenant,
			object: request(version, map[string]string{v1beta1.SourceLabel: v1beta1.SourceKubectl}, map[string]string{v1beta1.ReasonAnnotation: "stuck"})}, "")
		add("an update that leaves the marks as they are", write{operation: admission.Update, user: tenant,
			object: request(version, map[string]string{v1beta1.PolicyLabel: "nightly", v1beta1.TriggerLabel: "schedule", "team": "shop"}, notes, policyRef), old: request(version, marks, notes, policyRef)}, "")
		add("the garbage collector orphans a request", write{operation: admission.Update, user: serviceAccount("kube-system", "generic-garbage-collector", ""),
			object: request(version, marks, notes), old: request(version, marks, notes, policyRef)}, "")
		for _, tc := range cases {
			got := judge(t, p, tc.w, managerAccount)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("%s: %s: %q, want %q", version, tc.name, got, tc.want)
			}
		}
	}
}
