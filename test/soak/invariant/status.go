package invariant

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// claimed are the containers r's status says were recreated: every one
// it lists when its result is Succeeded, and each whose state is
// Succeeded.
func claimed(r *request) []string {
	var out []string
	if r.obj.Status.Result == v1beta1.ResultSucceeded {
		out = append(out, r.containers...)
	}
	for _, s := range r.obj.Status.ContainerRecreateStates {
		if s.Phase == v1beta1.PhaseSucceeded && !slices.Contains(out, s.Name) {
			out = append(out, s.Name)
		}
	}
	return out
}

// watchStatus holds r, just seen ended, to its status: each container it
// says it recreated must have been seen to restart while r was under way
// (from Slack.Skew before it was first seen to Slack.Attribution after it
// ended), whether or not the restart is attributed to r: requests queued
// on one pod are all satisfied by one new instance created after each of
// them, as OpenKruise counts a container started after the request as
// recreated. When every container missing is one whose new instance the
// request's status snapshot names and the pod was never seen with, the
// soak's own pod watch lags (after an API server restart, its relist
// comes late): the restart is waited for until Slack.Component after the
// end.
func (c *Checker) watchStatus(r *request, at time.Time) {
	want := claimed(r)
	if len(want) == 0 {
		return
	}
	c.after(at.Add(c.slack.Attribution), func(time.Time, bool) {
		missing, unseen := c.unrestarted(r, want, c.slack.Attribution)
		if len(missing) == 0 {
			return
		}
		if len(unseen) == len(missing) {
			// The request reports new instances the soak's pod watch has
			// not delivered yet (it lags after an API server restart):
			// wait for them, Slack.Component at the most.
			c.after(r.terminalAt.Add(c.slack.Component), func(time.Time, bool) {
				if missing, _ := c.unrestarted(r, want, c.slack.Component); len(missing) > 0 {
					c.statusMismatch(r, missing)
				}
			})
			return
		}
		c.statusMismatch(r, missing)
	})
}

// unrestarted are the containers of want that r was not seen to restart
// from Slack.Skew before it was first seen to grace after it ended; unseen
// those of them whose new instance r's status snapshot reports and the pod
// was never seen with.
func (c *Checker) unrestarted(r *request, want []string, grace time.Duration) (missing, unseen []string) {
	p := c.podOf(r)
	for _, name := range want {
		if r.restarts[name] > 0 {
			continue
		}
		if p != nil && p.restartedWithin(name, r.firstSeen.Add(-c.slack.Skew), r.terminalAt.Add(grace)) {
			continue
		}
		missing = append(missing, name)
		if id := r.reportedInstance(name); id != "" && (p == nil || p.instances[name] == nil || p.instances[name].id != id) {
			unseen = append(unseen, name)
		}
	}
	return missing, unseen
}

// statusMismatch reports that r claims containers recreated that were not
// seen to restart.
func (c *Checker) statusMismatch(r *request, missing []string) {
	c.violate(StatusMatches, r.terminalAt, r.subject(),
		fmt.Sprintf("reports container %s recreated, but no restart of it was seen while the request was under way", strings.Join(missing, ",")),
		c.statusEvidence(r, missing)...)
}

// statusEvidence is r with its status, and for each missing container
// what the request recorded of it and what the pod shows.
func (c *Checker) statusEvidence(r *request, missing []string) []string {
	st := r.obj.Status
	evidence := []string{c.describeRequest(r)}
	if st.Message != "" {
		evidence = append(evidence, "status.message: "+st.Message)
	}
	for _, s := range st.ContainerRecreateStates {
		evidence = append(evidence, fmt.Sprintf("containerRecreateStates %s: phase %s, isKilled %t, message %q", s.Name, s.Phase, s.IsKilled, s.Message))
	}
	p := c.podOf(r)
	for _, ctr := range r.obj.Spec.Containers {
		if !slices.Contains(missing, ctr.Name) {
			continue
		}
		line := "container " + ctr.Name + ":"
		if sc := ctr.StatusContext; sc != nil {
			line += fmt.Sprintf(" at the request's creation containerID %s restartCount %d;", shortID(sc.ContainerID), sc.RestartCount)
		}
		if p != nil {
			if in := p.instances[ctr.Name]; in != nil {
				line += fmt.Sprintf(" last seen containerID %s restartCount %d", shortID(in.id), in.restarts)
			}
		}
		evidence = append(evidence, line)
	}
	if p != nil {
		evidence = append(evidence, c.describePod(p))
	}
	return evidence
}
