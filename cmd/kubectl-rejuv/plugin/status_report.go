package plugin

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// statusReport is what kubectl rejuv status shows, and prints with -o
// json or yaml.
type statusReport struct {
	// Target is what was asked about: a namespace, all namespaces, or
	// TYPE/NAME.
	Target   string          `json:"target"`
	Requests []requestStatus `json:"requests"`
	Policies []policyStatus  `json:"policies"`
}

// requestStatus is one ContainerRecreateRequest: what it recreates, who
// asked and why, and how far it is.
type requestStatus struct {
	Namespace  string            `json:"namespace"`
	Name       string            `json:"name"`
	Pod        string            `json:"pod"`
	Node       string            `json:"node,omitempty"`
	Source     string            `json:"source"`
	Policy     string            `json:"policy,omitempty"`
	Trigger    string            `json:"trigger,omitempty"`
	Reason     string            `json:"reason,omitempty"`
	Phase      string            `json:"phase"`
	Result     string            `json:"result,omitempty"`
	Message    string            `json:"message,omitempty"`
	Containers []containerStatus `json:"containers"`
	Created    time.Time         `json:"created"`
	Completed  *time.Time        `json:"completed,omitempty"`
	Deadline   *time.Time        `json:"deadline,omitempty"`
}

// containerStatus is one container of a request.
type containerStatus struct {
	Name    string `json:"name"`
	Phase   string `json:"phase"`
	Message string `json:"message,omitempty"`
}

// policyStatus is one RecreatePolicy: what it selects, whether it acts,
// its run, and its decisions (for the pods asked about).
type policyStatus struct {
	Namespace string                `json:"namespace"`
	Name      string                `json:"name"`
	Ready     string                `json:"ready"`
	Halted    string                `json:"halted,omitempty"`
	Selected  int32                 `json:"selected"`
	Active    int32                 `json:"active"`
	Run       *v1alpha1.Run         `json:"run,omitempty"`
	NextRun   *time.Time            `json:"nextRun,omitempty"`
	NoData    []v1alpha1.RuleNoData `json:"noData,omitempty"`
	Decisions []v1alpha1.Decision   `json:"decisions,omitempty"`
}

// inFlight says whether the request has not completed.
func (r *requestStatus) inFlight() bool { return r.Phase != string(v1beta1.PhaseCompleted) }

// gatherStatus reads the requests and policies the target concerns.
func gatherStatus(ctx context.Context, cl *clients, t *target, allNamespaces bool) (*statusReport, error) {
	ns := cl.namespace
	report := &statusReport{Target: "namespace " + ns, Requests: []requestStatus{}, Policies: []policyStatus{}}
	var opts []client.ListOption
	if allNamespaces {
		report.Target = "all namespaces"
	} else {
		opts = append(opts, client.InNamespace(ns))
	}
	if t != nil {
		report.Target = t.String()
	}
	requests := &v1beta1.ContainerRecreateRequestList{}
	if err := cl.client.List(ctx, requests, opts...); err != nil {
		return nil, fmt.Errorf("list ContainerRecreateRequests: %w", err)
	}
	policies := &v1alpha1.RecreatePolicyList{}
	if err := cl.client.List(ctx, policies, opts...); err != nil {
		return nil, fmt.Errorf("list RecreatePolicies: %w", err)
	}
	keep, err := statusFilterOf(ctx, cl, t)
	if err != nil {
		return nil, err
	}
	for i := range requests.Items {
		if r := &requests.Items[i]; keep.request(r) {
			report.Requests = append(report.Requests, requestStatusOf(r))
		}
	}
	for i := range policies.Items {
		if p := &policies.Items[i]; keep.policy(p) {
			report.Policies = append(report.Policies, policyStatusOf(p, keep.decision))
		}
	}
	// In flight first, then newest first.
	slices.SortFunc(report.Requests, func(a, b requestStatus) int {
		if a.inFlight() != b.inFlight() {
			if a.inFlight() {
				return -1
			}
			return 1
		}
		return cmp.Or(b.Created.Compare(a.Created), cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name))
	})
	slices.SortFunc(report.Policies, func(a, b policyStatus) int {
		return cmp.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return report, nil
}

// statusFilter keeps what concerns a target: for a pod or workload, its
// pods' requests and the policies that select them, with their decisions
// for those pods; for a request or policy, that object (and a policy's
// requests).
type statusFilter struct {
	request  func(*v1beta1.ContainerRecreateRequest) bool
	policy   func(*v1alpha1.RecreatePolicy) bool
	decision func(*v1alpha1.Decision) bool
}

func statusFilterOf(ctx context.Context, cl *clients, t *target) (statusFilter, error) {
	all := statusFilter{
		request:  func(*v1beta1.ContainerRecreateRequest) bool { return true },
		policy:   func(*v1alpha1.RecreatePolicy) bool { return true },
		decision: func(*v1alpha1.Decision) bool { return true },
	}
	switch {
	case t == nil:
		return all, nil
	case t.request != nil:
		return statusFilter{
			request:  func(r *v1beta1.ContainerRecreateRequest) bool { return r.Name == t.name },
			policy:   func(p *v1alpha1.RecreatePolicy) bool { return p.Name == t.request.Labels[v1beta1.PolicyLabel] },
			decision: func(d *v1alpha1.Decision) bool { return d.Request == t.name },
		}, nil
	case t.policy != nil:
		return statusFilter{
			request:  func(r *v1beta1.ContainerRecreateRequest) bool { return r.Labels[v1beta1.PolicyLabel] == t.name },
			policy:   func(p *v1alpha1.RecreatePolicy) bool { return p.Name == t.name },
			decision: all.decision,
		}, nil
	}
	pods, err := t.pods(ctx, cl)
	if err != nil {
		return statusFilter{}, err
	}
	byName := map[string]*corev1.Pod{}
	for i := range pods {
		byName[pods[i].Name] = &pods[i]
	}
	return statusFilter{
		request: func(r *v1beta1.ContainerRecreateRequest) bool { return byName[r.Spec.PodName] != nil },
		policy: func(p *v1alpha1.RecreatePolicy) bool {
			sel, err := metav1.LabelSelectorAsSelector(&p.Spec.Selector)
			if err != nil {
				return false
			}
			for _, pod := range byName {
				if sel.Matches(labels.Set(pod.Labels)) {
					return true
				}
			}
			return false
		},
		decision: func(d *v1alpha1.Decision) bool { return d.Pod == "" || byName[d.Pod] != nil },
	}, nil
}

func requestStatusOf(r *v1beta1.ContainerRecreateRequest) requestStatus {
	s := requestStatus{
		Namespace: r.Namespace, Name: r.Name, Pod: r.Spec.PodName, Node: r.Labels[v1beta1.NodeNameLabel],
		Source: v1beta1.SourceOf(r), Policy: r.Labels[v1beta1.PolicyLabel], Trigger: r.Labels[v1beta1.TriggerLabel],
		Reason: r.Annotations[v1beta1.ReasonAnnotation], Phase: string(r.Status.Phase), Result: string(r.Status.Result),
		Message: r.Status.Message, Created: r.CreationTimestamp.Time,
	}
	if s.Phase == "" {
		s.Phase = string(v1beta1.PhasePending)
	}
	if ct := r.Status.CompletionTime; ct != nil {
		s.Completed = &ct.Time
	}
	if d, ok := r.Deadline(); ok {
		s.Deadline = &d
	}
	states := map[string]v1beta1.ContainerRecreateRequestContainerRecreateState{}
	for _, st := range r.Status.ContainerRecreateStates {
		states[st.Name] = st
	}
	for _, c := range r.Spec.Containers {
		st, ok := states[c.Name]
		phase := string(st.Phase)
		if !ok || phase == "" {
			phase = string(v1beta1.PhasePending)
		}
		s.Containers = append(s.Containers, containerStatus{Name: c.Name, Phase: phase, Message: st.Message})
	}
	return s
}

func policyStatusOf(p *v1alpha1.RecreatePolicy, keep func(*v1alpha1.Decision) bool) policyStatus {
	s := policyStatus{
		Namespace: p.Namespace, Name: p.Name, Ready: conditionText(p, v1alpha1.ConditionReady),
		Selected: p.Status.SelectedPods, Active: p.Status.ActiveRecreations, Run: p.Status.Run, NoData: p.Status.NoData,
	}
	if c := apimeta.FindStatusCondition(p.Status.Conditions, v1alpha1.ConditionHalted); c != nil && c.Status == metav1.ConditionTrue {
		s.Halted = c.Message
	}
	if n := p.Status.NextScheduleTime; n != nil && p.Spec.Schedule != nil {
		s.NextRun = &n.Time
	}
	for i := range p.Status.RecentDecisions {
		if d := &p.Status.RecentDecisions[i]; keep(d) {
			s.Decisions = append(s.Decisions, *d)
		}
	}
	return s
}

// conditionText is a condition's status, with its reason when not True.
func conditionText(p *v1alpha1.RecreatePolicy, typ string) string {
	c := apimeta.FindStatusCondition(p.Status.Conditions, typ)
	switch {
	case c == nil:
		return "Unknown"
	case c.Status == metav1.ConditionTrue:
		return "True"
	}
	return fmt.Sprintf("%s (%s)", c.Status, c.Reason)
}
