package plugin

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/recreatepolicy"
)

func newPolicyCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work with RecreatePolicies before they are applied",
	}
	cmd.AddCommand(newPolicyTestCommand(o), newPolicyBacktestCommand(o))
	return cmd
}

// policyTest is kubectl rejuv policy test.
type policyTest struct {
	o      *Options
	files  []string
	pods   []string
	input  string
	expect string
	output string
	at     string
	now    func() time.Time
}

// Why the plugin's evaluations lack the signals the manager gathers.
const (
	noMemoryHere  = "kubectl rejuv has no working set history: the manager samples it over time (its policy status shows the memory rules' no data)"
	noSignalsHere = "kubectl rejuv queries no Prometheus: the manager evaluates spec.signals with its --prometheus-url"
)

func newPolicyTestCommand(o *Options) *cobra.Command {
	pt := &policyTest{o: o, now: time.Now}
	cmd := &cobra.Command{
		Use:   "test -f POLICY.yaml [--pods FILE|DIR] [--input POD] [--expect FILE]",
		Short: "Evaluate a policy's rules against pods, live or from files, and show what it would decide",
		Long: `Evaluate the built-in and inline rules of RecreatePolicies against pods, as a
pass of the Rejuv manager would, and print for each selected pod what the rules
matched and why, the signals they lacked (no data), the decision, and what each
gate (suspended, windows, requests in flight, cooldown, maxPerHour, blast
radius, maxUnavailable, PodDisruptionBudgets) makes of it. For a policy with a
schedule or restartAt it also shows what a run starting now would do first.

The pods are read from --pods (files of Pods, ContainerRecreateRequests and
PodDisruptionBudgets, such as kubectl get pods -o yaml writes; a pod without
status counts as running) or, without --pods, from the cluster: the policy's
namespace is read, nothing is written. The memory rules and spec.signals have
no data here: the manager samples memory over time and queries its own
Prometheus.

--expect names a file of expected results; the command then prints each
expectation with PASS or FAIL and exits 1 when any fails, for CI pipelines:

  results:
  - policy: stuck
    pod: web-0
    outcome: Created        # Created, DryRun, a gate (Unavailable...), Skipped, None, NoData or Error
    containers: [app]       # optional
    rule: stuck-readiness   # optional: the rule that triggered it`,
		Example: `  # What would the policy do to the pods running now?
  kubectl rejuv policy test -f policy.yaml

  # Against pods saved earlier, at a given time, checked against expectations
  kubectl get pods -n shop -o yaml > pods.yaml
  kubectl rejuv policy test -f policy.yaml --pods pods.yaml --at 2026-11-24T03:00:00Z --expect expected.yaml

  # The input document each rule sees for one pod
  kubectl rejuv policy test -f policy.yaml --input web-0`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return pt.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&pt.files, "filename", "f", nil, "A file or directory of RecreatePolicies (- for standard input); repeat for more.")
	f.StringArrayVar(&pt.pods, "pods", nil, "A file or directory of Pods (and ContainerRecreateRequests and PodDisruptionBudgets) to test against instead of the cluster's; repeat for more.")
	f.StringVar(&pt.input, "input", "", "Print the input document each rule sees for this pod, instead of the results.")
	f.StringVar(&pt.expect, "expect", "", "A file of expected results: print PASS or FAIL for each and exit 1 when any fails.")
	f.StringVarP(&pt.output, "output", "o", "", "Output format: wide (every gate of every candidate), json or yaml; tables when empty.")
	f.StringVar(&pt.at, "at", "", "Evaluate at this time (RFC 3339) instead of now.")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("pods", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("expect", "yaml", "yml")
	return cmd
}

func (pt *policyTest) run(ctx context.Context) error {
	switch pt.output {
	case "", "wide", "json", "yaml":
	default:
		return usageError("--output %q: policy test prints as wide, json or yaml, or as tables when -o is not given", pt.output)
	}
	now := pt.now()
	if pt.at != "" {
		t, err := time.Parse(time.RFC3339, pt.at)
		if err != nil {
			return usageError("--at %q: not an RFC 3339 time such as 2026-11-24T03:00:00Z", pt.at)
		}
		now = t
	}
	var in objects
	for _, f := range pt.files {
		if err := readObjects(f, pt.o.Streams.In, &in); err != nil {
			return fmt.Errorf("-f: %w", err)
		}
	}
	if len(in.policies) == 0 {
		return usageError("-f names no RecreatePolicy")
	}
	var exp *expectations
	if pt.expect != "" {
		var err error
		if exp, err = readExpectations(pt.expect); err != nil {
			return err
		}
	}
	var from objects
	for _, f := range pt.pods {
		if err := readObjects(f, pt.o.Streams.In, &from); err != nil {
			return fmt.Errorf("--pods: %w", err)
		}
	}
	report := &policyTestReport{At: now}
	for i := range in.policies {
		p := &in.policies[i]
		input, err := pt.inputFor(ctx, p, &from)
		if err != nil {
			return err
		}
		input.Now, input.InputOf = now, pt.input
		preview, err := recreatepolicy.PreviewPolicy(ctx, p, input)
		if err != nil {
			return err
		}
		report.Policies = append(report.Policies, policyResultOf(p, preview))
	}
	if pt.input != "" {
		return pt.printInputs(report)
	}
	if exp != nil {
		return exp.check(pt.o.Streams.Out, report)
	}
	return pt.print(report)
}

// inputFor gathers what the preview of p reads: the objects of --pods of
// p's namespace, or, without --pods, the cluster's (read only).
func (pt *policyTest) inputFor(ctx context.Context, p *v1alpha1.RecreatePolicy, from *objects) (recreatepolicy.PreviewInput, error) {
	in := recreatepolicy.PreviewInput{NoMemory: noMemoryHere, NoSignals: noSignalsHere}
	if len(pt.pods) > 0 {
		if p.Namespace == "" {
			p.Namespace = "default"
		}
		for _, pod := range from.pods {
			if pod.Namespace != "" && pod.Namespace != p.Namespace {
				continue
			}
			pod.Namespace = p.Namespace
			if pod.Status.Phase == "" {
				pod.Status.Phase = corev1.PodRunning
			}
			if pod.Spec.NodeName == "" {
				pod.Spec.NodeName = "node"
			}
			if pod.UID == "" {
				pod.UID = k8stypes.UID("offline-" + pod.Namespace + "-" + pod.Name)
			}
			in.Pods = append(in.Pods, pod)
		}
		for _, r := range from.requests {
			if r.Namespace == "" || r.Namespace == p.Namespace {
				in.Requests = append(in.Requests, r)
			}
		}
		if len(from.budgets) > 0 {
			in.DisruptionBudgets = []policyv1.PodDisruptionBudget{}
			for _, b := range from.budgets {
				if b.Namespace == "" || b.Namespace == p.Namespace {
					in.DisruptionBudgets = append(in.DisruptionBudgets, b)
				}
			}
		}
		return in, nil
	}
	cl, err := pt.o.Clients()
	if err != nil {
		return in, err
	}
	if p.Namespace == "" {
		p.Namespace = cl.namespace
	}
	ns := client.InNamespace(p.Namespace)
	pods := &corev1.PodList{}
	if err := cl.client.List(ctx, pods, ns); err != nil {
		return in, fmt.Errorf("list the pods of namespace %s: %w", p.Namespace, err)
	}
	requests := &v1beta1.ContainerRecreateRequestList{}
	if err := cl.client.List(ctx, requests, ns); err != nil {
		return in, fmt.Errorf("list the ContainerRecreateRequests of namespace %s: %w", p.Namespace, err)
	}
	budgets := &policyv1.PodDisruptionBudgetList{}
	if err := cl.client.List(ctx, budgets, ns); err != nil {
		return in, fmt.Errorf("list the PodDisruptionBudgets of namespace %s: %w", p.Namespace, err)
	}
	in.Pods, in.Requests, in.DisruptionBudgets = pods.Items, requests.Items, budgets.Items
	return in, nil
}
