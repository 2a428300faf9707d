package invariant

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A Checker judges a soak's observations against Rejuv's promises as they
// arrive, keeping what it needs of the past indexed by namespace, pod and
// request. It is not safe for concurrent use: the runner feeds it from one
// goroutine, in the order it saw things.
type Checker struct {
	slack   Slack
	traffic []Fault

	// origin is the first observation's time, from which evidence counts.
	origin  time.Time
	started bool
	// now is the latest observation's time.
	now time.Time

	pods          map[types.UID]*pod
	podsByName    map[string]*pod
	namespaces    map[string]*namespace
	requests      map[string]*request
	requestsByPod map[string][]*request
	policies      map[types.UID]*policy
	pdbs          map[types.UID]*pdb
	components    map[types.UID]*component
	// componentsFrom is when the first of Rejuv's pods was seen: those
	// seen within Slack.Skew of it were there before the soak.
	componentsFrom time.Time

	windows     []*window
	windowsByID map[int]*window

	// decisions are a policy's requests for one pod, in the order seen.
	decisions map[decisionKey][]*request
	// recreatedInRun are, per run of a policy, the pods seen to restart
	// for its requests, with the request.
	recreatedInRun map[runKey]map[types.UID]*request
	checkedRuns    map[runKey]bool
	// unattributed are restarts waiting for their request to be seen.
	unattributed map[types.UID][]*restart
	// disruptions are requests that took a pod a budget did not allow,
	// waiting Slack.Skew for the budget's pods to be seen healthy.
	disruptions []*disruption
	clients     map[string]*clientEpisode

	timers    timers
	timerSeq  int
	finishing bool

	violations []*Violation
	tally      tally
	faults     map[Fault]int
}

// namespace holds what a namespace's pods are judged against.
type namespace struct {
	pods     map[types.UID]*pod
	policies map[types.UID]*policy
	pdbs     map[types.UID]*pdb
}

// NewChecker returns a checker with slack s. A client's failure during
// one of trafficFaults, or within Slack.Traffic after it, is expected and
// counted apart; any other is a violation.
func NewChecker(s Slack, trafficFaults []Fault) *Checker {
	return &Checker{
		slack:          s,
		traffic:        trafficFaults,
		pods:           map[types.UID]*pod{},
		podsByName:     map[string]*pod{},
		namespaces:     map[string]*namespace{},
		requests:       map[string]*request{},
		requestsByPod:  map[string][]*request{},
		policies:       map[types.UID]*policy{},
		pdbs:           map[types.UID]*pdb{},
		components:     map[types.UID]*component{},
		windowsByID:    map[int]*window{},
		decisions:      map[decisionKey][]*request{},
		recreatedInRun: map[runKey]map[types.UID]*request{},
		checkedRuns:    map[runKey]bool{},
		unattributed:   map[types.UID][]*restart{},
		clients:        map[string]*clientEpisode{},
		faults:         map[Fault]int{},
		tally:          tally{explained: map[Fault]int{}},
	}
}

// Observe judges o, which must not be earlier than the observation before
// it. Deferred judgements due before o are made first, on the state that
// held until o; then o is applied and judged. An observation of a kind
// the checker does not know, or without its object, only moves time on.
func (c *Checker) Observe(o Observation) {
	at := o.When()
	if !c.started {
		c.origin, c.started = at, true
	}
	c.now = at
	c.expire(at)
	switch o := o.(type) {
	case PodSeen:
		c.podSeen(o)
	case RequestSeen:
		c.requestSeen(o)
	case PolicySeen:
		c.policySeen(o)
	case BudgetSeen:
		c.budgetSeen(o)
	case ComponentSeen:
		c.componentSeen(o)
	case FaultStarted:
		c.faultStarted(o)
	case FaultEnded:
		c.faultEnded(o)
	case ClientFailed:
		c.clientFailed(o)
	case Panic:
		c.panicked(o)
	}
	c.recheckDisruptions()
}

// namespace returns ns's view, made on first use.
func (c *Checker) namespace(ns string) *namespace {
	n := c.namespaces[ns]
	if n == nil {
		n = &namespace{pods: map[types.UID]*pod{}, policies: map[types.UID]*policy{}, pdbs: map[types.UID]*pdb{}}
		c.namespaces[ns] = n
	}
	return n
}
