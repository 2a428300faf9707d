package plugin

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/recreatepolicy"
)

// explanation is what kubectl rejuv explain says of a pod, and prints with
// -o json or yaml.
type explanation struct {
	Pod       string            `json:"pod"`
	Namespace string            `json:"namespace"`
	Node      string            `json:"node"`
	Phase     string            `json:"phase"`
	Ready     bool              `json:"ready"`
	Requests  []requestStatus   `json:"requests"`
	Policies  []policyExplained `json:"policies"`
	now       time.Time
}

// policyExplained is one policy of the pod's namespace: whether it
// selects the pod and, if it does, what it decided and would decide now.
type policyExplained struct {
	Name    string `json:"name"`
	Selects bool   `json:"selects"`
	// WhyNot says which requirement of the selector the pod fails.
	WhyNot     string              `json:"whyNot,omitempty"`
	Containers []string            `json:"containers,omitempty"`
	Schedule   string              `json:"schedule,omitempty"`
	NextRun    *time.Time          `json:"nextRun,omitempty"`
	Rules      []string            `json:"rules,omitempty"`
	Ready      string              `json:"ready,omitempty"`
	Halted     string              `json:"halted,omitempty"`
	Decisions  []v1alpha1.Decision `json:"decisions,omitempty"`
	Now        *podResult          `json:"now,omitempty"`
	// RunNow is what a run starting now would do to the pod first, for a
	// policy with a schedule or restartAt.
	RunNow *podResult `json:"runNow,omitempty"`
}

func newExplainCommand(o *Options) *cobra.Command {
	var output string
	now := time.Now
	cmd := &cobra.Command{
		Use:   "explain POD",
		Short: "Which policies select a pod, what they decided for it, and why",
		Long: `Explain a pod: its containers, the ContainerRecreateRequests made for it, and
every RecreatePolicy of its namespace: whether the policy selects it (and if
not, which requirement of the selector it fails), which of its containers the
policy may recreate, the policy's schedule and rules, its recent decisions
about the pod, and what its rules and gates make of the pod now (evaluated
here, read only, as kubectl rejuv policy test does).`,
		Example: `  kubectl rejuv explain web-0
  kubectl rejuv explain web-0 -o yaml`,
		Args:              exactArgs(1, "name the pod: kubectl rejuv explain POD"),
		ValidArgsFunction: completeTargets(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch output {
			case "", "json", "yaml":
			default:
				return usageError("--output %q: explain prints as json or yaml, or as text when -o is not given", output)
			}
			e, err := explain(cmd.Context(), o, args[0], now())
			if err != nil {
				return err
			}
			if output != "" {
				return printData(o.Streams.Out, e, output)
			}
			return e.render(o.Streams.Out)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "Output format: json or yaml; text when empty.")
	return cmd
}

func explain(ctx context.Context, o *Options, name string, now time.Time) (*explanation, error) {
	cl, err := o.Clients()
	if err != nil {
		return nil, err
	}
	t, err := resolveTarget(ctx, cl, name, "", "pod")
	if err != nil {
		return nil, err
	}
	pod := t.pod
	e := &explanation{Pod: pod.Name, Namespace: pod.Namespace, Node: pod.Spec.NodeName, Phase: string(pod.Status.Phase), Ready: pods.Ready(pod), now: now}
	ns := client.InNamespace(pod.Namespace)
	podList := &corev1.PodList{}
	requests := &v1beta1.ContainerRecreateRequestList{}
	budgets := &policyv1.PodDisruptionBudgetList{}
	policies := &v1alpha1.RecreatePolicyList{}
	for _, l := range []client.ObjectList{podList, requests, budgets, policies} {
		if err := cl.client.List(ctx, l, ns); err != nil {
			return nil, fmt.Errorf("read namespace %s: %w", pod.Namespace, err)
		}
	}
	for i := range requests.Items {
		if r := &requests.Items[i]; r.Spec.PodName == pod.Name {
			e.Requests = append(e.Requests, requestStatusOf(r))
		}
	}
	for i := range policies.Items {
		p := &policies.Items[i]
		pe := policyExplained{Name: p.Name}
		sel, err := metav1.LabelSelectorAsSelector(&p.Spec.Selector)
		if err != nil {
			pe.WhyNot = "its selector is invalid: " + err.Error()
			e.Policies = append(e.Policies, pe)
			continue
		}
		if !sel.Matches(labels.Set(pod.Labels)) {
			pe.WhyNot = unmet(sel, pod.Labels)
			e.Policies = append(e.Policies, pe)
			continue
		}
		pe.Selects = true
		ps := policyStatusOf(p, func(d *v1alpha1.Decision) bool { return d.Pod == pod.Name })
		pe.Ready, pe.Halted, pe.Decisions, pe.NextRun = ps.Ready, ps.Halted, ps.Decisions, ps.NextRun
		pe.Containers = containersOf(p, pod)
		if s := p.Spec.Schedule; s != nil {
			pe.Schedule = s.Cron + " (" + zoneOf(s.TimeZone) + ")"
		}
		for _, r := range p.Spec.Rules {
			kind := "rego"
			if r.Builtin != "" {
				kind = r.Builtin
			}
			pe.Rules = append(pe.Rules, r.Name+" ("+kind+")")
		}
		preview, err := recreatepolicy.PreviewPolicy(ctx, p, recreatepolicy.PreviewInput{
			Pods: podList.Items, Requests: requests.Items, DisruptionBudgets: budgets.Items, Now: now,
			NoMemory: noMemoryHere, NoSignals: noSignalsHere, Paused: pausedAsReported(p),
		})
		if err == nil {
			result := policyResultOf(p, preview)
			for _, pr := range result.Pods {
				if pr.Pod == pod.Name {
					pe.Now = &pr
				}
			}
			for _, pr := range result.Run {
				if pr.Pod == pod.Name {
					pe.RunNow = &pr
				}
			}
		}
		e.Policies = append(e.Policies, pe)
	}
	return e, nil
}

// unmet says which requirement of sel the labels fail.
func unmet(sel labels.Selector, set map[string]string) string {
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if !r.Matches(labels.Set(set)) {
			have := "the pod has no label " + r.Key()
			if v, ok := set[r.Key()]; ok {
				have = fmt.Sprintf("the pod's %s is %s", r.Key(), v)
			}
			return fmt.Sprintf("its selector requires %s; %s", r.String(), have)
		}
	}
	return "its selector does not match the pod's labels"
}

// containersOf are the containers of pod the policy may recreate.
func containersOf(p *v1alpha1.RecreatePolicy, pod *corev1.Pod) []string {
	return policyContainers(p).Candidates(pod)
}

func zoneOf(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

func (e *explanation) render(w io.Writer) error {
	printf(w, "Pod %s/%s on node %s: %s, ready %v\n", e.Namespace, e.Pod, e.Node, e.Phase, e.Ready)
	if len(e.Requests) == 0 {
		fmt.Fprintln(w, "\nNo ContainerRecreateRequest for this pod.")
	} else {
		fmt.Fprintln(w, "\nRequests for this pod:")
		for _, r := range e.Requests {
			phase := r.Phase
			if r.Result != "" {
				phase += " " + r.Result
			}
			printf(w, "  %s  %s  %s ago  %s  %s: %s\n", r.Name, phase, duration.HumanDuration(e.now.Sub(r.Created)), containersText(r.Containers, false), sourceText(r), r.Reason)
		}
	}
	if len(e.Policies) == 0 {
		printf(w, "\nNo RecreatePolicy in namespace %s.\n", e.Namespace)
		return nil
	}
	for _, p := range e.Policies {
		if !p.Selects {
			printf(w, "\nRecreatePolicy %s does not select this pod: %s.\n", p.Name, p.WhyNot)
			continue
		}
		printf(w, "\nRecreatePolicy %s selects this pod (ready %s).\n", p.Name, p.Ready)
		printf(w, "  may recreate: %s\n", orNone(p.Containers, "none (the kubelet would not start its containers again)"))
		if p.Schedule != "" {
			next := ""
			if p.NextRun != nil {
				next = ", next run in " + duration.HumanDuration(p.NextRun.Sub(e.now))
			}
			printf(w, "  schedule: %s%s\n", p.Schedule, next)
		}
		if len(p.Rules) > 0 {
			printf(w, "  rules: %s\n", strings.Join(p.Rules, ", "))
		}
		if p.Halted != "" {
			printf(w, "  halted: %s\n", p.Halted)
		}
		if len(p.Decisions) == 0 {
			fmt.Fprintln(w, "  no recent decision about this pod")
		} else {
			fmt.Fprintln(w, "  recent decisions about this pod:")
			for _, d := range p.Decisions {
				printf(w, "    %s ago  %s  %s  %s: %s\n", duration.HumanDuration(e.now.Sub(d.Time.Time)), d.Trigger, d.Outcome, strings.Join(d.Containers, ","), decisionWhy(&d, false))
			}
		}
		if p.Now != nil {
			printf(w, "  its rules now: %s: %s\n", p.Now.Outcome, p.Now.why())
			for _, line := range p.Now.details(false) {
				printf(w, "    %s\n", line)
			}
		}
		if p.RunNow != nil {
			printf(w, "  a run starting now: %s: %s\n", p.RunNow.Outcome, p.RunNow.why())
		}
	}
	return nil
}

func orNone(list []string, none string) string {
	if len(list) == 0 {
		return none
	}
	return strings.Join(list, ", ")
}

// pausedAsReported is why Rejuv is paused cluster-wide as the manager last
// said in the policy's Ready condition, "" when it did not: the policy's
// status is what a tenant may read.
func pausedAsReported(p *v1alpha1.RecreatePolicy) string {
	if c := meta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionReady); c != nil && c.Reason == v1alpha1.ReasonPaused {
		return c.Message
	}
	return ""
}
