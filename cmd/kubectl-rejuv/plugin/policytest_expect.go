package plugin

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"
)

// expectations are the results a policy test should give, for CI
// pipelines.
type expectations struct {
	Results []expectation `json:"results"`
}

// expectation is one pod's expected result under one policy.
type expectation struct {
	Policy string `json:"policy"`
	Pod    string `json:"pod"`
	// Outcome is Created, DryRun, a gate, Skipped, None, NoData or Error.
	Outcome    string   `json:"outcome"`
	Containers []string `json:"containers,omitempty"`
	// Rule is the rule that triggered the decision.
	Rule string `json:"rule,omitempty"`
}

func readExpectations(path string) (*expectations, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read --expect: %w", err)
	}
	var e expectations
	if err := yaml.UnmarshalStrict(b, &e); err != nil {
		return nil, fmt.Errorf("--expect %s: %w", path, err)
	}
	for i, x := range e.Results {
		switch {
		case x.Policy == "":
			return nil, fmt.Errorf("--expect %s: results[%d].policy: name the policy", path, i)
		case x.Pod == "":
			return nil, fmt.Errorf("--expect %s: results[%d].pod: name the pod", path, i)
		case x.Outcome == "":
			return nil, fmt.Errorf("--expect %s: results[%d].outcome: Created, DryRun, a gate (Unavailable, Cooldown...), Skipped, None, NoData or Error", path, i)
		}
	}
	if len(e.Results) == 0 {
		return nil, fmt.Errorf("--expect %s: no results to check", path)
	}
	return &e, nil
}

// check prints each expectation with PASS or FAIL and what was found, and
// fails when any does.
func (e *expectations) check(w io.Writer, r *policyTestReport) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "POLICY\tPOD\tWANT\tGOT\tRESULT")
	failed := 0
	for _, x := range e.Results {
		got, ok := find(r, x.Policy, x.Pod)
		gotText := "not evaluated (not selected, not running, or no container named)"
		pass := false
		if ok {
			gotText = describe(got.Outcome, got.Containers, ruleOf(got.Trigger))
			pass = got.Outcome == x.Outcome &&
				(x.Containers == nil || slices.Equal(sorted(x.Containers), sorted(got.Containers))) &&
				(x.Rule == "" || x.Rule == ruleOf(got.Trigger))
		}
		result := "PASS"
		if !pass {
			result, failed = "FAIL", failed+1
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", x.Policy, x.Pod, describe(x.Outcome, x.Containers, x.Rule), gotText, result)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d of %d passed\n", len(e.Results)-failed, len(e.Results))
	if failed > 0 {
		return &FailedError{What: fmt.Sprintf("%d expectations failed", failed)}
	}
	return nil
}

func find(r *policyTestReport, policy, pod string) (podResult, bool) {
	for _, p := range r.Policies {
		if p.Policy != policy {
			continue
		}
		for _, pr := range p.Pods {
			if pr.Pod == pod {
				return pr, true
			}
		}
		for _, pr := range p.Run {
			if pr.Pod == pod {
				return pr, true
			}
		}
	}
	return podResult{}, false
}

// ruleOf is the rule of a trigger rule/NAME, "" for others.
func ruleOf(trigger string) string {
	rule, _ := strings.CutPrefix(trigger, "rule/")
	if rule == trigger {
		return ""
	}
	return rule
}

func describe(outcome string, containers []string, rule string) string {
	s := outcome
	if len(containers) > 0 {
		s += " " + strings.Join(containers, ",")
	}
	if rule != "" {
		s += " by " + rule
	}
	return s
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
