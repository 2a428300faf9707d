package backtest

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Report is what a backtest found: what the policy would have recreated
// over the period, beside the kernel's OOM kills of the same containers.
type Report struct {
	// Policy is the policy's namespace/name; Variant names the parameters
	// it was replayed with (--set), empty for the policy as written.
	Policy  string    `json:"policy"`
	Variant string    `json:"variant,omitempty"`
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	// Interval and Window are the sampler's the replay kept windows with.
	Interval metav1.Duration `json:"interval"`
	Window   metav1.Duration `json:"window"`
	// Pods and Containers count what the policy selected in the period.
	Pods       int `json:"pods"`
	Containers int `json:"containers"`
	// Coverage is what history lacked.
	Coverage Coverage `json:"coverage"`
	// NotReplayed are the rules whose verdicts the history cannot give,
	// and why: they were evaluated, but what they read was not recorded.
	NotReplayed []RuleNote `json:"notReplayed,omitempty"`
	// Held counts the candidates the gates held back, by outcome
	// (Cooldown, Recurring, RateLimited, Halted...).
	Held map[string]int `json:"held,omitempty"`
	// Failures are the rules' evaluation errors, the first of each.
	Failures []string `json:"failures,omitempty"`
	// Results are the containers with a recreation or an OOM kill, by pod
	// and container.
	Results []ContainerResult `json:"results"`
	Summary Summary           `json:"summary"`
}

// RuleNote says why a rule's verdicts could not be replayed.
type RuleNote struct {
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

// ContainerResult is what the backtest found for one container.
type ContainerResult struct {
	Pod        string `json:"pod"`
	Container  string `json:"container"`
	LimitBytes int64  `json:"limitBytes,omitempty"`
	// Recreations are the ones the policy would have made, in order.
	Recreations []Recreation `json:"recreations,omitempty"`
	// Kills are the kernel's OOM kills of the container in the period.
	Kills []Kill `json:"kills,omitempty"`
}

// Recreation is one recreation the policy would have made.
type Recreation struct {
	At time.Time `json:"at"`
	// Age is the recreated instance's, from its start (or from the
	// replay's previous recreation of it).
	Age    metav1.Duration `json:"age"`
	Rule   string          `json:"rule"`
	Reason string          `json:"reason"`
	// WorkingSetBytes is the container's working set then.
	WorkingSetBytes int64 `json:"workingSetBytes"`
	// Needed is set when the kernel later killed the recorded instance it
	// would have recreated for running out of memory.
	Needed bool `json:"needed"`
	// instance is the index of the recorded instance it recreated.
	instance int
}

// Kill is one OOM kill of a container in the period.
type Kill struct {
	At time.Time `json:"at"`
	// Age is how long the killed instance ran.
	Age metav1.Duration `json:"age"`
	// Caught is set when a recreation would have come before it, in the
	// killed instance; LeadTime is from the first such recreation to the
	// kill.
	Caught   bool             `json:"caught"`
	LeadTime *metav1.Duration `json:"leadTime,omitempty"`
}

// Summary sums the results up.
type Summary struct {
	// Recreations the policy would have made.
	Recreations int `json:"recreations"`
	// Kills are the OOM kills in the period: Caught those a recreation
	// would have come before, Missed the others.
	Kills  int `json:"kills"`
	Caught int `json:"caught"`
	Missed int `json:"missed"`
	// Unneeded are the recreations of instances the kernel did not kill
	// afterwards in the period: at most this many false positives.
	Unneeded int `json:"unneeded"`
}

// summarize sums the results up.
func (r *Report) summarize() {
	r.Summary = Summary{}
	for i := range r.Results {
		res := &r.Results[i]
		for k := range res.Kills {
			kill := &res.Kills[k]
			if kill.Caught {
				r.Summary.Caught++
			} else {
				r.Summary.Missed++
			}
		}
		r.Summary.Kills += len(res.Kills)
		r.Summary.Recreations += len(res.Recreations)
		for _, rec := range res.Recreations {
			if !rec.Needed {
				r.Summary.Unneeded++
			}
		}
	}
}
