package policyspec

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy"
)

// Spec is a RecreatePolicy's spec, parsed and checked.
type Spec struct {
	Selector           labels.Selector
	Containers         Containers
	Schedule           *Schedule
	Windows            []Window
	Rules              []policy.Rule
	EvaluationInterval time.Duration
	MaxUnavailable     UnavailableLimit
	Cooldown           time.Duration
	// MemoryRecurrence is limits.memoryRecurrence; MemoryRules are the
	// names of the rules that read the memory signal.
	MemoryRecurrence   time.Duration
	MemoryRules        map[string]bool
	MaxMatchingPercent int32
	MinMatchingToHalt  int32
}

// Defaults used when the stored object lacks them (the CRD sets them; an
// object written before that CRD, or built in a test, may not have them).
const (
	DefaultEvaluationInterval = 30 * time.Second
	DefaultCooldown           = 30 * time.Minute
	DefaultMemoryRecurrence   = 2 * time.Hour
	DefaultMaxMatchingPercent = 50
	DefaultMinMatchingToHalt  = 2
	minEvaluationInterval     = time.Second
)

// Selects says whether policy p selects a pod labelled podLabels; a
// selector that does not parse (admission refuses one) selects nothing.
func Selects(p *v1alpha1.RecreatePolicy, podLabels map[string]string) bool {
	sel, err := metav1.LabelSelectorAsSelector(&p.Spec.Selector)
	return err == nil && sel.Matches(labels.Set(podLabels))
}

// Parse checks spec and returns its parsed form, or every problem found,
// each naming its field. Rego is parsed here but compiled by the engine:
// call policy.Check on Spec.Rules for compile errors.
func Parse(spec *v1alpha1.RecreatePolicySpec) (*Spec, field.ErrorList) {
	root := field.NewPath("spec")
	var errs field.ErrorList
	out := &Spec{
		EvaluationInterval: DefaultEvaluationInterval, Cooldown: DefaultCooldown, MemoryRecurrence: DefaultMemoryRecurrence,
		MaxMatchingPercent: DefaultMaxMatchingPercent, MinMatchingToHalt: DefaultMinMatchingToHalt,
	}

	selPath := root.Child("selector")
	if e := metav1validation.ValidateLabelSelector(&spec.Selector, metav1validation.LabelSelectorValidationOptions{}, selPath); len(e) > 0 {
		errs = append(errs, e...)
	} else if sel, err := metav1.LabelSelectorAsSelector(&spec.Selector); err != nil {
		errs = append(errs, field.Invalid(selPath, spec.Selector, err.Error()))
	} else {
		out.Selector = sel
	}

	var e field.ErrorList
	out.Containers, e = parseContainers(spec.Containers, root.Child("containers"))
	errs = append(errs, e...)

	if spec.Schedule != nil {
		out.Schedule, e = parseSchedule(spec.Schedule, root.Child("schedule"))
		errs = append(errs, e...)
	}
	for i := range spec.Windows {
		w, e := parseWindow(&spec.Windows[i], root.Child("windows").Index(i))
		errs = append(errs, e...)
		if w != nil {
			out.Windows = append(out.Windows, *w)
		}
	}
	out.Rules, e = parseRules(spec.Rules, root.Child("rules"))
	errs = append(errs, e...)
	if spec.Schedule == nil && len(spec.Rules) == 0 && spec.RestartAt == nil {
		errs = append(errs, field.Required(root.Child("rules"), "a policy needs a schedule, rules or restartAt"))
	}

	if d := spec.EvaluationInterval; d != nil {
		if d.Duration < minEvaluationInterval {
			errs = append(errs, field.Invalid(root.Child("evaluationInterval"), d.Duration.String(), "must be at least 1s"))
		}
		out.EvaluationInterval = d.Duration
	}
	out.MaxUnavailable, e = ParseMaxUnavailable(spec.Rollout.MaxUnavailable, root.Child("rollout", "maxUnavailable"))
	errs = append(errs, e...)
	if d := spec.Limits.Cooldown; d != nil {
		if d.Duration < 0 {
			errs = append(errs, field.Invalid(root.Child("limits", "cooldown"), d.Duration.String(), "must not be negative"))
		}
		out.Cooldown = d.Duration
	}
	if d := spec.Limits.MemoryRecurrence; d != nil {
		if d.Duration < 0 {
			errs = append(errs, field.Invalid(root.Child("limits", "memoryRecurrence"), d.Duration.String(), "must not be negative"))
		}
		out.MemoryRecurrence = d.Duration
	}
	for i := range spec.Rules {
		if RuleReadsMemory(&spec.Rules[i]) {
			if out.MemoryRules == nil {
				out.MemoryRules = map[string]bool{}
			}
			out.MemoryRules[spec.Rules[i].Name] = true
		}
	}
	errs = append(errs, ValidateRequestTerms(root.Child("recreate"), spec.Recreate.Strategy, spec.Recreate.ActiveDeadlineSeconds, spec.Recreate.TTLSecondsAfterFinished)...)
	if m := spec.Limits.MaxMatchingPercent; m != nil {
		out.MaxMatchingPercent = *m
	}
	if m := spec.Limits.MinMatchingToHalt; m != nil {
		out.MinMatchingToHalt = *m
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return out, nil
}
