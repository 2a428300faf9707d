package config

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// The ValidatingAdmissionPolicies of config/admission, compiled and
// evaluated in process as the API server's admission plugin does
// (k8s.io/apiserver), against the requests they exist for: their CEL is
// checked without a cluster. Which requests reach a policy (its
// matchConstraints) is the API server's part; the tests check those
// fields as written.

// shippedPolicy is a policy of config/admission with its binding.
type shippedPolicy struct {
	policy  *admissionregistrationv1.ValidatingAdmissionPolicy
	binding *admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// shippedPolicies reads config/admission by policy name.
func shippedPolicies(t *testing.T) map[string]*shippedPolicy {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("admission", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*shippedPolicy{}
	at := func(name string) *shippedPolicy {
		if out[name] == nil {
			out[name] = &shippedPolicy{}
		}
		return out[name]
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for doc := range bytes.SplitSeq(data, []byte("\n---\n")) {
			var kind struct{ Kind string }
			if err := yaml.Unmarshal(doc, &kind); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			switch kind.Kind {
			case "ValidatingAdmissionPolicy":
				p := &admissionregistrationv1.ValidatingAdmissionPolicy{}
				if err := yaml.UnmarshalStrict(doc, p); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				at(p.Name).policy = p
			case "ValidatingAdmissionPolicyBinding":
				b := &admissionregistrationv1.ValidatingAdmissionPolicyBinding{}
				if err := yaml.UnmarshalStrict(doc, b); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				at(b.Spec.PolicyName).binding = b
			default:
				t.Fatalf("%s: unexpected kind %q", f, kind.Kind)
			}
		}
	}
	for name, p := range out {
		if p.policy == nil || p.binding == nil {
			t.Fatalf("config/admission: policy %s and its binding are not both there", name)
		}
	}
	return out
}

// validator compiles a policy as the API server's admission plugin does.
func validator(p *admissionregistrationv1.ValidatingAdmissionPolicy) validating.Validator {
	hasParams := p.Spec.ParamKind != nil
	withAuthorizer := plugincel.OptionalVariableDeclarations{HasParams: hasParams, HasAuthorizer: true}
	forMessages := plugincel.OptionalVariableDeclarations{HasParams: hasParams}
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err)
	}
	variables := make([]plugincel.NamedExpressionAccessor, len(p.Spec.Variables))
	for i, v := range p.Spec.Variables {
		variables[i] = &validating.Variable{Name: v.Name, Expression: v.Expression}
	}
	compiler.CompileAndStoreVariables(variables, withAuthorizer, environment.StoredExpressions)
	var matcher matchconditions.Matcher
	if len(p.Spec.MatchConditions) > 0 {
		conditions := make([]plugincel.ExpressionAccessor, len(p.Spec.MatchConditions))
		for i := range p.Spec.MatchConditions {
			conditions[i] = (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i])
		}
		matcher = matchconditions.NewMatcher(compiler.CompileCondition(conditions, withAuthorizer, environment.StoredExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	validations := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]plugincel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	return validating.NewValidator(
		compiler.CompileCondition(validations, withAuthorizer, environment.StoredExpressions),
		matcher,
		compiler.CompileCondition(nil, withAuthorizer, environment.StoredExpressions),
		compiler.CompileCondition(messages, forMessages, environment.StoredExpressions),
		p.Spec.FailurePolicy, nil)
}

// write is one request to the API server that a policy judges.
type write struct {
	operation   admission.Operation
	subresource string
	object, old *unstructured.Unstructured
	user        user.Info
	// allowed is what RBAC allows the user, by verb and resource
	// ("delete pods", "create-for-policy containerrecreaterequests");
	// "*" alone is every verb on every resource.
	allowed []string
}

// judge evaluates the policy on w with params, and returns the refusal,
// "" when w is admitted. A policy that fails to evaluate fails the test.
func judge(t *testing.T, p *shippedPolicy, w write, params runtime.Object) string {
	t.Helper()
	obj, old := w.object, w.old
	named := obj
	if named == nil {
		named = old
	}
	gvk := named.GroupVersionKind()
	resource := "containerrecreaterequests"
	if gvk.Kind == "Pod" {
		resource = "pods"
	}
	gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: resource}
	var o, oo runtime.Object
	if obj != nil {
		o = obj
	}
	if old != nil {
		oo = old
	}
	attr := admission.NewAttributesRecord(o, oo, gvk, named.GetNamespace(), named.GetName(), gvr, w.subresource, w.operation, nil, false, w.user)
	versioned, err := admission.NewVersionedAttributes(attr, gvk, nil)
	if err != nil {
		t.Fatal(err)
	}
	authz := authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
		for _, rule := range w.allowed {
			if rule == "*" || rule == a.GetVerb()+" "+a.GetResource() {
				return authorizer.DecisionAllow, "", nil
			}
		}
		return authorizer.DecisionNoOpinion, "", nil
	})
	result := validator(p.policy).Validate(context.Background(), gvr, versioned, params, nil, celconfig.RuntimeCELCostBudget, authz)
	var refusals []string
	for _, d := range result.Decisions {
		if d.Evaluation == validating.EvalError {
			t.Fatalf("policy %s: %s", p.policy.Name, d.Message)
		}
		if d.Action == validating.ActionDeny {
			refusals = append(refusals, d.Message)
		}
	}
	return strings.Join(refusals, "; ")
}

// crr is a request of the version, in namespace shop, for pod web on node
// node-a, as the API server hands it to admission.
func crr(version, name string, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.kruise.io/" + version,
		"kind":       "ContainerRecreateRequest",
		"metadata": map[string]any{
			"namespace": "shop",
			"name":      name,
			"labels":    map[string]any{"crr.apps.kruise.io/node-name": "node-a"},
		},
		"spec": map[string]any{"podName": "web", "containers": []any{map[string]any{"name": "app"}}},
	}}
	if annotations != nil {
		u.SetAnnotations(annotations)
	}
	return u
}

func person(name string, groups ...string) user.Info {
	return &user.DefaultInfo{Name: name, Groups: append(groups, "system:authenticated")}
}
