package plugin

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// statusText renders a status report as tables: the requests, the
// policies, and the policies' recent decisions. wide adds the node, the
// deadline and the messages.
type statusText struct {
	w    io.Writer
	now  time.Time
	wide bool
	// allNamespaces adds a NAMESPACE column.
	allNamespaces bool
}

func (s statusText) render(r *statusReport) error {
	if len(r.Requests) == 0 && len(r.Policies) == 0 {
		_, err := fmt.Fprintf(s.w, "Nothing is being recreated in %s, and no RecreatePolicy selects it.\n", r.Target)
		return err
	}
	if err := s.requests(r); err != nil {
		return err
	}
	if err := s.policies(r); err != nil {
		return err
	}
	return s.decisions(r)
}

func (s statusText) table(header ...string) *tabwriter.Writer {
	tw := tabwriter.NewWriter(s.w, 0, 8, 2, ' ', 0)
	if s.allNamespaces {
		header = append([]string{"NAMESPACE"}, header...)
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	return tw
}

func (s statusText) row(tw io.Writer, namespace string, cells ...string) {
	if s.allNamespaces {
		cells = append([]string{namespace}, cells...)
	}
	for i, c := range cells {
		if c == "" {
			c = "-"
		}
		cells[i] = printable(c)
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
}

func (s statusText) requests(r *statusReport) error {
	if len(r.Requests) == 0 {
		_, err := fmt.Fprintf(s.w, "No ContainerRecreateRequest in %s.\n", r.Target)
		return err
	}
	fmt.Fprintf(s.w, "Requests (%d in flight):\n", inFlightCount(r.Requests))
	header := []string{"NAME", "POD", "CONTAINERS", "SOURCE", "PHASE", "AGE", "REASON"}
	if s.wide {
		header = append(header, "NODE", "DEADLINE", "MESSAGE")
	}
	tw := s.table(header...)
	for _, q := range r.Requests {
		phase := q.Phase
		if q.Result != "" {
			phase = q.Result
		}
		cells := []string{q.Name, q.Pod, containersText(q.Containers, s.wide), sourceText(q), phase, s.age(q.Created), q.Reason}
		if s.wide {
			deadline := ""
			if q.Deadline != nil && q.inFlight() {
				deadline = "in " + duration.HumanDuration(q.Deadline.Sub(s.now))
			}
			cells = append(cells, q.Node, deadline, q.Message)
		}
		s.row(tw, q.Namespace, cells...)
	}
	return tw.Flush()
}

func inFlightCount(list []requestStatus) int {
	n := 0
	for i := range list {
		if list[i].inFlight() {
			n++
		}
	}
	return n
}

// containersText is each container with its phase; the messages too when
// wide.
func containersText(list []containerStatus, wide bool) string {
	parts := make([]string, 0, len(list))
	for _, c := range list {
		part := c.Name + "=" + c.Phase
		if wide && c.Message != "" {
			part += " (" + c.Message + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ",")
}

// sourceText is who asked: kubectl, manual, or the policy and its
// trigger.
func sourceText(q requestStatus) string {
	if q.Policy == "" {
		return q.Source
	}
	return "rp/" + q.Policy + " (" + strings.Replace(q.Trigger, ".", "/", 1) + ")"
}

func (s statusText) policies(r *statusReport) error {
	if len(r.Policies) == 0 {
		if strings.HasPrefix(r.Target, "containerrecreaterequest/") {
			// A request made by hand: no policy to show.
			return nil
		}
		_, err := fmt.Fprintf(s.w, "\nNo RecreatePolicy selects %s.\n", r.Target)
		return err
	}
	fmt.Fprintln(s.w, "\nPolicies:")
	tw := s.table("NAME", "READY", "SELECTED", "ACTIVE", "RUN", "NEXT RUN", "HALTED")
	for _, p := range r.Policies {
		next := ""
		if p.NextRun != nil {
			next = "in " + duration.HumanDuration(p.NextRun.Sub(s.now))
		}
		s.row(tw, p.Namespace, p.Name, p.Ready, fmt.Sprint(p.Selected), fmt.Sprint(p.Active), runText(p.Run, s.now), next, p.Halted)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, p := range r.Policies {
		for _, nd := range p.NoData {
			printf(s.w, "  %s: rule %s has no %s for %d pods%s\n", p.Name, nd.Rule, nd.Signal, nd.Pods, suffixed(nd.Reason))
		}
	}
	return nil
}

// runText is a run's state and progress: Running 2/5 (restart).
func runText(run *v1alpha1.Run, now time.Time) string {
	if run == nil {
		return ""
	}
	kind := "schedule"
	if run.Requested {
		kind = "restart"
	}
	text := fmt.Sprintf("%s %d/%d (%s)", run.State, run.Recreated, run.ToRecreate(), kind)
	if run.State != v1alpha1.RunRunning && run.CompletionTime != nil {
		text += " " + duration.HumanDuration(now.Sub(run.CompletionTime.Time)) + " ago"
	}
	return text
}

func (s statusText) decisions(r *statusReport) error {
	var any bool
	for _, p := range r.Policies {
		any = any || len(p.Decisions) > 0
	}
	if !any {
		return nil
	}
	fmt.Fprintln(s.w, "\nRecent decisions (newest first):")
	header := []string{"AGE", "POLICY", "POD", "CONTAINERS", "TRIGGER", "OUTCOME", "WHY"}
	type policyDecision struct {
		p *policyStatus
		d *v1alpha1.Decision
	}
	var all []policyDecision
	for i := range r.Policies {
		for j := range r.Policies[i].Decisions {
			all = append(all, policyDecision{&r.Policies[i], &r.Policies[i].Decisions[j]})
		}
	}
	slices.SortStableFunc(all, func(a, b policyDecision) int { return b.d.Time.Compare(a.d.Time.Time) })
	tw := s.table(header...)
	for _, x := range all {
		d := x.d
		s.row(tw, x.p.Namespace, s.age(d.Time.Time), x.p.Name, d.Pod, strings.Join(d.Containers, ","), d.Trigger, string(d.Outcome), decisionWhy(d, s.wide))
	}
	return tw.Flush()
}

// decisionWhy is why a decision went as it did: the reason the trigger
// gave for one that went through, the message of the gate (and, with
// reason, the trigger's reason too) for one held back.
func decisionWhy(d *v1alpha1.Decision, reason bool) string {
	if d.Outcome == v1alpha1.OutcomeCreated || d.Message == "" {
		return d.Reason
	}
	if reason && d.Reason != "" {
		return d.Message + " (" + d.Reason + ")"
	}
	return d.Message
}

func (s statusText) age(t time.Time) string {
	return duration.HumanDuration(s.now.Sub(t))
}
