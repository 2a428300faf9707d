package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
	"github.com/rejuv-dev/rejuv/healer/signals"
	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/rules"
)

// ValidatePolicyPath serves the RecreatePolicy validation.
const ValidatePolicyPath = "/validate-rejuv-dev-v1alpha1-recreatepolicy"

// +kubebuilder:webhook:path=/validate-rejuv-dev-v1alpha1-recreatepolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=rejuv.dev,resources=recreatepolicies,verbs=create;update,versions=v1alpha1,name=vrp.rejuv.dev,admissionReviewVersions=v1,matchPolicy=Equivalent,timeoutSeconds=10

// PolicyValidator rejects RecreatePolicies the controller could not run:
// a bad selector, container pattern, cron expression, time zone or budget,
// an unknown builtin or parameter, Rego that does not compile. Each
// rejection names the field. It warns about container patterns that match
// no container of the pods the policy selects today, and about signals
// that no rule names or that no Prometheus answers.
type PolicyValidator struct {
	// Reader lists the selected pods, for the warnings.
	Reader  client.Reader
	Decoder admission.Decoder
	// Prometheus is set when the manager has a Prometheus for signals.
	Prometheus bool
	// VerifiedCallers says the webhook answers only the API server (see
	// Callers): only then is a review's namespace the policy's, and only
	// then do warnings say anything about its pods.
	VerifiedCallers bool
}

// maxWarningPods bounds the pods read for the warnings: one page.
const maxWarningPods = 500

// Handle implements admission.Handler.
func (v *PolicyValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	p := &v1alpha1.RecreatePolicy{}
	if err := v.Decoder.Decode(req, p); err != nil {
		return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode RecreatePolicy: %w", err))
	}
	if req.Operation == admissionv1.Update {
		old := &v1alpha1.RecreatePolicy{}
		if err := v.Decoder.DecodeRaw(req.OldObject, old); err != nil {
			return admission.Errored(http.StatusBadRequest, fmt.Errorf("decode the stored RecreatePolicy %s/%s: %w", req.Namespace, p.Name, err))
		}
		// A policy that got in before a rule or parameter was withdrawn
		// can still be labelled, annotated or deleted.
		if equality.Semantic.DeepEqual(old.Spec, p.Spec) {
			return admission.Allowed("")
		}
	}
	spec, errs := policyspec.Parse(&p.Spec)
	if req.Operation == admissionv1.Create {
		errs = append(errs, nameErrors(p.Name)...)
	}
	if spec != nil {
		errs = append(errs, compileErrors(ctx, &p.Spec, spec.Rules)...)
	}
	errs = append(errs, signalErrors(&p.Spec, req.Namespace)...)
	if len(errs) > 0 {
		return invalidObject(policyKind, p.Name, errs)
	}
	resp := admission.Allowed("")
	resp.Warnings = v.warnings(ctx, req.Namespace, p, spec)
	return resp
}

// signalErrors refuses a signal's query that cannot be limited to the
// policy's namespace (signals.Scope says why): a policy reads only its own
// namespace's series, though its queries run with the manager's
// Prometheus credentials.
func signalErrors(in *v1alpha1.RecreatePolicySpec, namespace string) field.ErrorList {
	var errs field.ErrorList
	for i, s := range in.Signals {
		if _, err := signals.Scope(s.Query, namespace); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec", "signals").Index(i).Child("query"), s.Query, err.Error()))
		}
	}
	return errs
}

// compileErrors compiles the rules and points each error at the rule's
// rego field (or builtin, for a built-in that does not compile).
func compileErrors(ctx context.Context, in *v1alpha1.RecreatePolicySpec, rules []policy.Rule) field.ErrorList {
	err := policy.Check(ctx, rules)
	if err == nil {
		return nil
	}
	var ce policy.CompileErrors
	if !errors.As(err, &ce) {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "rules"), err)}
	}
	var errs field.ErrorList
	for _, e := range ce {
		i := ruleIndex(in.Rules, e.Rule)
		fld := field.NewPath("spec", "rules").Index(i).Child("rego")
		if in.Rules[i].Builtin != "" {
			fld = field.NewPath("spec", "rules").Index(i).Child("builtin")
		}
		msg := e.Message
		if e.Line > 0 {
			msg = fmt.Sprintf("line %d: %s", e.Line, msg)
		}
		errs = append(errs, field.Invalid(fld, ruleSummary(&in.Rules[i]), fmt.Sprintf("rule %q does not compile: %s", e.Rule, msg)))
	}
	return errs
}

func ruleIndex(rules []v1alpha1.Rule, name string) int {
	for i := range rules {
		if rules[i].Name == name {
			return i
		}
	}
	return 0
}

// ruleSummary stands for a rule's value in an error: the module's first
// line rather than all of it.
func ruleSummary(r *v1alpha1.Rule) string {
	if r.Builtin != "" {
		return r.Builtin
	}
	first, _, more := strings.Cut(strings.TrimSpace(r.Rego), "\n")
	if more {
		first += " ..."
	}
	return first
}

// nameErrors refuses a name too long to be a label value: every request
// the policy creates carries it in the label v1beta1.PolicyLabel.
func nameErrors(name string) field.ErrorList {
	if len(name) <= validation.LabelValueMaxLength {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), name,
		fmt.Sprintf("must be no more than %d characters: every request the policy creates carries it in the label %s", validation.LabelValueMaxLength, v1beta1.PolicyLabel))}
}

func (v *PolicyValidator) warnings(ctx context.Context, namespace string, p *v1alpha1.RecreatePolicy, spec *policyspec.Spec) []string {
	var out []string
	switch {
	case spec.Selector.Empty():
		out = append(out, fmt.Sprintf("spec.selector: an empty selector selects every pod of namespace %s; name the pods to heal with matchLabels or matchExpressions", namespace))
	case !selectsByPresence(spec.Selector):
		out = append(out, fmt.Sprintf("spec.selector: with only NotIn and DoesNotExist requirements it selects every pod of namespace %s that lacks those labels, pods of workloads created later included; add matchLabels or an In or Exists requirement", namespace))
	}
	if w := scheduleWarning(p, spec, time.Now()); w != "" {
		out = append(out, w)
	}
	out = append(out, v.signalWarnings(p)...)
	return append(out, v.containerWarnings(ctx, namespace, p, spec)...)
}

// scheduleWarning warns of a schedule whose runs come closer than the
// kubelet's back-off window: every run after the first recreates
// containers the kubelet then holds in its back-off, longer each time.
func scheduleWarning(p *v1alpha1.RecreatePolicy, spec *policyspec.Spec, now time.Time) string {
	if spec.Schedule == nil {
		return ""
	}
	gap := spec.Schedule.ShortestGap(now)
	if gap == 0 || gap >= pods.BackOffWindow {
		return ""
	}
	return fmt.Sprintf("spec.schedule.cron %q: runs come as little as %s apart; a container restarted again within %s waits for the kubelet's restart back-off (10s, doubling up to 5m) before it runs again, out of service all the while (docs/policy.md: the kubelet's restart back-off)",
		p.Spec.Schedule.Cron, gap, pods.BackOffWindow)
}

// signalWarnings name the signals no rule names, and all of them when the
// manager has no Prometheus.
func (v *PolicyValidator) signalWarnings(p *v1alpha1.RecreatePolicy) []string {
	if len(p.Spec.Signals) == 0 {
		return nil
	}
	var out []string
	if !v.Prometheus {
		out = append(out, "spec.signals: the manager has no Prometheus (--prometheus-url): the signals have no values, and the rules that name them recreate nothing")
	}
	for i, s := range p.Spec.Signals {
		named := false
		for _, r := range p.Spec.Rules {
			named = named || (r.Rego != "" && rules.Names(r.Rego, s.Name))
		}
		if !named {
			out = append(out, fmt.Sprintf("spec.signals[%d]: no rule names signal %s (input.signals.%s or a container's signals.%s): its query runs for nothing", i, s.Name, s.Name, s.Name))
		}
	}
	return out
}

// selectsByPresence says whether the selector requires a label to be
// there (matchLabels, In or Exists), rather than only to be absent or
// different.
func selectsByPresence(s labels.Selector) bool {
	reqs, _ := s.Requirements()
	for _, r := range reqs {
		switch r.Operator() {
		case selection.Equals, selection.DoubleEquals, selection.In, selection.Exists:
			return true
		}
	}
	return false
}

// containerWarnings name the container patterns that match no container of
// the pods the selector matches now, read in one page of at most
// maxWarningPods. A review from an unverified caller gets none: it may
// name any namespace, and the warning would tell how many of its pods a
// selector matches and which container names they have.
func (v *PolicyValidator) containerWarnings(ctx context.Context, namespace string, p *v1alpha1.RecreatePolicy, spec *policyspec.Spec) []string {
	if v.Reader == nil || !v.VerifiedCallers || len(spec.Containers) == 0 {
		return nil
	}
	pods := &corev1.PodList{}
	if err := v.Reader.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: spec.Selector}, client.Limit(maxWarningPods)); err != nil {
		ctrl.LoggerFrom(ctx).Info("cannot list the pods of a RecreatePolicy for warnings", "policy", namespace+"/"+p.Name, "error", err.Error())
		return nil
	}
	if len(pods.Items) == 0 {
		return nil
	}
	which := fmt.Sprintf("the %d pods", len(pods.Items))
	if pods.Continue != "" {
		which = fmt.Sprintf("the first %d pods (of more; no more were read)", len(pods.Items))
	}
	var out []string
	for _, pattern := range spec.Containers.Unmatched(pods.Items) {
		out = append(out, fmt.Sprintf("spec.containers: %q matches no container of %s the selector matches now", pattern, which))
	}
	return out
}
