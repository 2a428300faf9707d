package plugin

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/recreatepolicy"
)

// policyTestReport is what policy test found, and prints with -o json or
// yaml.
type policyTestReport struct {
	At       time.Time          `json:"at"`
	Policies []policyTestResult `json:"policies"`
}

// policyTestResult is one policy's preview.
type policyTestResult struct {
	Policy    string `json:"policy"`
	Namespace string `json:"namespace"`
	Selected  int    `json:"selected"`
	// Halted says why the rules match too many pods to act on.
	Halted string      `json:"halted,omitempty"`
	Pods   []podResult `json:"pods"`
	// Run is what a run starting now would do first.
	Run    []podResult    `json:"run,omitempty"`
	Inputs map[string]any `json:"-"`
}

// podResult is what came of one pod.
type podResult struct {
	Pod        string   `json:"pod"`
	Containers []string `json:"containers,omitempty"`
	// Outcome is the decision's (Created, DryRun, a gate's, Skipped), or
	// None when no rule matched, NoData when a rule lacked a signal and
	// none matched, Error when a rule failed and none matched.
	Outcome string         `json:"outcome"`
	Trigger string         `json:"trigger,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Message string         `json:"message,omitempty"`
	Matches []matchResult  `json:"matches,omitempty"`
	NoData  []noDataResult `json:"noData,omitempty"`
	Errors  []string       `json:"errors,omitempty"`
	Gates   []gateResult   `json:"gates,omitempty"`
}

type matchResult struct {
	Rule      string `json:"rule"`
	Container string `json:"container"`
	Reason    string `json:"reason,omitempty"`
}

type noDataResult struct {
	Rule   string `json:"rule"`
	Signal string `json:"signal"`
	Reason string `json:"reason,omitempty"`
}

// gateResult is what one gate makes of a candidate: pass, hold or n/a
// (a rules-only gate, for a run).
type gateResult struct {
	Gate    string `json:"gate"`
	Verdict string `json:"verdict"`
	Message string `json:"message,omitempty"`
}

// The outcomes of a pod no decision was made for.
const (
	outcomeNone   = "None"
	outcomeNoData = "NoData"
	outcomeError  = "Error"
)

func policyResultOf(p *v1alpha1.RecreatePolicy, pv *recreatepolicy.Preview) policyTestResult {
	r := policyTestResult{Policy: p.Name, Namespace: p.Namespace, Selected: pv.Selected, Halted: pv.Halted, Inputs: pv.Inputs}
	for _, pp := range pv.Pods {
		pr := podResult{Pod: pp.Pod.Name, Outcome: outcomeNone}
		if pp.Error != "" {
			pr.Errors = append(pr.Errors, pp.Error)
		}
		for _, rule := range pp.Rules {
			for _, m := range rule.Matches {
				pr.Matches = append(pr.Matches, matchResult{Rule: rule.Rule, Container: m.Container, Reason: m.Reason})
			}
			for _, nd := range rule.NoData {
				pr.NoData = append(pr.NoData, noDataResult{Rule: rule.Rule, Signal: nd.Signal, Reason: nd.Reason})
			}
			if rule.Error != "" {
				pr.Errors = append(pr.Errors, rule.Error)
			}
		}
		switch {
		case pp.Decided != nil:
			pr.decided(pp.Decided)
		case len(pr.NoData) > 0:
			pr.Outcome = outcomeNoData
		case len(pr.Errors) > 0:
			pr.Outcome = outcomeError
		}
		r.Pods = append(r.Pods, pr)
	}
	for i := range pv.Run {
		pr := podResult{Pod: pv.Run[i].Decision.Pod}
		pr.decided(&pv.Run[i])
		r.Run = append(r.Run, pr)
	}
	return r
}

func (pr *podResult) decided(d *recreatepolicy.Decided) {
	pr.Outcome, pr.Containers = string(d.Decision.Outcome), d.Decision.Containers
	pr.Trigger, pr.Reason, pr.Message = d.Decision.Trigger, d.Decision.Reason, d.Decision.Message
	for _, g := range d.Gates {
		gr := gateResult{Gate: string(g.Gate), Verdict: "pass", Message: g.Message}
		switch {
		case !g.Applies:
			gr.Verdict = "n/a"
		case g.Message != "":
			gr.Verdict = "hold"
		}
		pr.Gates = append(pr.Gates, gr)
	}
}

func (pt *policyTest) print(r *policyTestReport) error {
	if pt.output == "json" || pt.output == "yaml" {
		return printData(pt.o.Streams.Out, r, pt.output)
	}
	return policyTestText{w: pt.o.Streams.Out, wide: pt.output == "wide"}.render(r)
}

// printInputs prints the input documents of the pod --input names, rule
// by rule, as JSON.
func (pt *policyTest) printInputs(r *policyTestReport) error {
	found := false
	for _, p := range r.Policies {
		if p.Inputs == nil {
			continue
		}
		found = true
		if err := printData(pt.o.Streams.Out, map[string]any{"policy": p.Policy, "pod": pt.input, "inputs": p.Inputs}, "json"); err != nil {
			return err
		}
	}
	if !found {
		return fmt.Errorf("no policy has rules that are evaluated for pod %s: it is not running, no policy selects it, or their patterns name none of its containers", pt.input)
	}
	return nil
}

// policyTestText renders the results as tables: each pod's decision and
// why, then the gates of each candidate (all of them when wide, the
// holding ones otherwise).
type policyTestText struct {
	w    io.Writer
	wide bool
}

func (t policyTestText) render(r *policyTestReport) error {
	for i, p := range r.Policies {
		if i > 0 {
			fmt.Fprintln(t.w)
		}
		printf(t.w, "RecreatePolicy %s/%s at %s: %d pods selected\n", p.Namespace, p.Policy, r.At.UTC().Format(time.RFC3339), p.Selected)
		if p.Halted != "" {
			printf(t.w, "halted: %s\n", p.Halted)
		}
		if len(p.Pods) > 0 {
			if err := t.table(p.Pods); err != nil {
				return err
			}
		}
		if p.Run != nil {
			printf(t.w, "A run starting now would take, in its first batch:\n")
			if len(p.Run) == 0 {
				fmt.Fprintln(t.w, "  no pod: every selected pod started after now")
			} else if err := t.table(p.Run); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t policyTestText) table(pods []podResult) error {
	tw := tabwriter.NewWriter(t.w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tCONTAINERS\tOUTCOME\tWHY")
	for _, pr := range pods {
		containers := strings.Join(pr.Containers, ",")
		if containers == "" {
			containers = "-"
		}
		printf(tw, "%s\t%s\t%s\t%s\n", pr.Pod, containers, pr.Outcome, pr.why())
		for _, line := range pr.details(t.wide) {
			printf(tw, "\t\t\t  %s\n", line)
		}
	}
	return tw.Flush()
}

// why is the pod's line: what matched, or why nothing was decided.
func (pr podResult) why() string {
	switch pr.Outcome {
	case outcomeNone:
		return "no rule matched"
	case outcomeNoData:
		return "no rule matched; a rule lacks a signal"
	case outcomeError:
		return strings.Join(pr.Errors, "; ")
	}
	if pr.Message != "" && pr.Outcome != string(v1alpha1.OutcomeCreated) && pr.Outcome != string(v1alpha1.OutcomeDryRun) {
		return pr.Message
	}
	return pr.Reason
}

// details are the lines under a pod: the reason of a held candidate, its
// gates, the rules' no data and errors.
func (pr podResult) details(wide bool) []string {
	var out []string
	if pr.Reason != "" && pr.why() != pr.Reason {
		out = append(out, "asked by "+pr.Trigger+": "+pr.Reason)
	}
	if len(pr.Gates) > 0 {
		var pass, na, hold []string
		for _, g := range pr.Gates {
			switch g.Verdict {
			case "pass":
				pass = append(pass, g.Gate)
			case "n/a":
				na = append(na, g.Gate)
			default:
				hold = append(hold, g.Gate+" ("+g.Message+")")
			}
		}
		if wide || len(hold) > 0 {
			line := "gates: pass " + strings.Join(pass, ", ")
			if len(hold) > 0 {
				line += "; hold " + strings.Join(hold, ", ")
			}
			if len(na) > 0 {
				line += "; n/a for a run " + strings.Join(na, ", ")
			}
			out = append(out, line)
		}
	}
	for _, nd := range pr.NoData {
		out = append(out, fmt.Sprintf("no data: rule %s lacks %s%s", nd.Rule, nd.Signal, suffixed(nd.Reason)))
	}
	if pr.Outcome != outcomeError {
		for _, e := range pr.Errors {
			out = append(out, "error: "+e)
		}
	}
	return out
}
