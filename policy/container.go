package policy

import (
	"maps"
	"strconv"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// containerEntry is a container's part of its input.containers entry and
// the facts it was built from.
type containerEntry struct {
	facts  containerFacts
	values entryValues
}

// entryValues are the values of a container's part of its entry, in the
// order of entryKeys; the entry's object is built from them when an
// evaluation needs it, so that an entry kept costs its values (most of
// them shared with other entries) and not a list of pairs besides.
type entryValues [len(entryKeys)]*ast.Term

// entryKeys are the keys of a container's part of its entry.
var entryKeys = [...]*ast.Term{keyName, keyKind, keyImage, keyResources, keyReady, keyStarted, keyState, keyStartedAt, keyRestartCount, keyLastTermination}

// newContainerEntry builds the container's part from its facts.
func newContainerEntry(f containerFacts) *containerEntry {
	return &containerEntry{facts: f, values: f.values(sharedTerms.resources(f.requests, f.limits), f.lastTerminationTerm())}
}

// entry is candidate c's entry on this part: the manager's history of the
// container as it is now, and an identity that kept results name it by.
// Its term is built when an evaluation needs it (candidateEntry.term),
// not kept: most passes take a pod's results from before, and a memory
// window moves the history at every sample anyway.
func (e *containerEntry) entry(c *ContainerCandidate) candidateEntry {
	return candidateEntry{candidate: snapshot(c), base: e, id: new(entryID)}
}

// term is the full input.containers entry: the container's part and the
// manager's history of it.
func (e *candidateEntry) term() *ast.Term {
	c := &e.candidate
	recreations := neverRecreated
	if c.Recreations != 0 || !c.LastRecreation.IsZero() {
		recreations = ast.ObjectTerm(
			[2]*ast.Term{keyTotal, ast.IntNumberTerm(c.Recreations)},
			[2]*ast.Term{keyLast, timeTerm(c.LastRecreation)},
		)
	}
	pairs := make([][2]*ast.Term, 0, len(entryKeys)+4)
	for i, v := range e.base.values {
		pairs = append(pairs, [2]*ast.Term{entryKeys[i], v})
	}
	pairs = append(pairs,
		[2]*ast.Term{keyNotReadySince, timeTerm(c.NotReadySince)},
		[2]*ast.Term{keyMemory, memoryTerm(c.Memory)},
		[2]*ast.Term{keySignals, signalsTerm(c.Signals)},
		[2]*ast.Term{keyRecreations, recreations},
	)
	return ast.ObjectTerm(pairs...)
}

// snapshot is a copy of c that its caller's later changes do not reach:
// the window and the signals are compared by value, not by reference.
func snapshot(c *ContainerCandidate) ContainerCandidate {
	out := *c
	if out.Memory != nil {
		m := *out.Memory
		out.Memory = &m
	}
	out.Signals = maps.Clone(out.Signals)
	return out
}

// memoryTerm is an entry's memory: null without a window.
func memoryTerm(m *MemoryWindow) *ast.Term {
	if m == nil {
		return ast.InternedNullTerm
	}
	return ast.ObjectTerm(
		[2]*ast.Term{keyWorkingSetBytes, intTerm(m.WorkingSetBytes)},
		[2]*ast.Term{keySamples, ast.IntNumberTerm(m.Samples)},
		[2]*ast.Term{keyWindowSeconds, ast.FloatNumberTerm(m.WindowSeconds)},
		[2]*ast.Term{keySlopeBytesPerSecond, ast.FloatNumberTerm(m.SlopeBytesPerSecond)},
		[2]*ast.Term{keyR2, ast.FloatNumberTerm(m.R2)},
		[2]*ast.Term{keyStartSlopeBytesPerSecond, ast.FloatNumberTerm(m.StartSlopeBytesPerSecond)},
		[2]*ast.Term{keyEndSlopeBytesPerSecond, ast.FloatNumberTerm(m.EndSlopeBytesPerSecond)},
		[2]*ast.Term{keyLatestSlopeBytesPerSecond, ast.FloatNumberTerm(m.LatestSlopeBytesPerSecond)},
	)
}

// containerFacts are what a container's input.containers entry says as far
// as the pod says it: equal facts make an equal entry, so a pod's new
// resourceVersion reuses the entries of the containers that did not change.
type containerFacts struct {
	name, image      string
	sidecar          bool
	requests, limits resourceFacts

	hasStatus, ready bool
	// started is -1 when the status does not say.
	started   int8
	state     stateKind
	startedAt int64
	restarts  int32

	terminated   bool
	lastReason   string
	lastExitCode int32
	lastStarted  int64
	lastFinished int64
}

type resourceFacts struct {
	hasMemory, hasCPU bool
	memory, milliCPU  int64
}

type stateKind int8

const (
	stateUnknown stateKind = iota
	stateRunning
	stateWaiting
	stateTerminated
)

// findContainerFacts gives the facts of the pod's container or sidecar
// name; false when the pod has no such container (an init container that
// is not a sidecar does not count).
func findContainerFacts(pod *corev1.Pod, name string) (containerFacts, bool) {
	switch c := pods.FindContainer(pod, name); c.Kind {
	case pods.ContainerRegular:
		return factsOf(c.Spec, false, pods.StatusIn(pod.Status.ContainerStatuses, name)), true
	case pods.ContainerSidecar:
		return factsOf(c.Spec, true, pods.StatusIn(pod.Status.InitContainerStatuses, name)), true
	}
	return containerFacts{}, false
}

func factsOf(c *corev1.Container, sidecar bool, st *corev1.ContainerStatus) containerFacts {
	f := containerFacts{
		name: c.Name, image: c.Image, sidecar: sidecar,
		requests: resourceFactsOf(c.Resources.Requests), limits: resourceFactsOf(c.Resources.Limits),
		started: -1,
	}
	if st == nil {
		return f
	}
	f.hasStatus, f.ready, f.restarts = true, st.Ready, st.RestartCount
	if st.Started != nil {
		f.started = 0
		if *st.Started {
			f.started = 1
		}
	}
	switch {
	case st.State.Running != nil:
		f.state, f.startedAt = stateRunning, unixNano(st.State.Running.StartedAt.Time)
	case st.State.Terminated != nil:
		f.state = stateTerminated
	case st.State.Waiting != nil:
		f.state = stateWaiting
	}
	if t := st.LastTerminationState.Terminated; t != nil {
		f.terminated, f.lastReason, f.lastExitCode = true, t.Reason, t.ExitCode
		f.lastStarted, f.lastFinished = unixNano(t.StartedAt.Time), unixNano(t.FinishedAt.Time)
	}
	return f
}

func resourceFactsOf(l corev1.ResourceList) resourceFacts {
	var r resourceFacts
	if q, ok := l[corev1.ResourceMemory]; ok {
		r.hasMemory, r.memory = true, q.Value()
	}
	if q, ok := l[corev1.ResourceCPU]; ok {
		r.hasCPU, r.milliCPU = true, q.MilliValue()
	}
	return r
}

// unixNano is t in nanoseconds, 0 for the zero time (null in the entry).
func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// Keys of input.containers entries and their parts.
var (
	keyName            = ast.StringTerm("name")
	keyKind            = ast.StringTerm("kind")
	keyImage           = ast.StringTerm("image")
	keyReady           = ast.StringTerm("ready")
	keyStarted         = ast.StringTerm("started")
	keyState           = ast.StringTerm("state")
	keyStartedAt       = ast.StringTerm("startedAt")
	keyRestartCount    = ast.StringTerm("restartCount")
	keyLastTermination = ast.StringTerm("lastTermination")
	keyResources       = ast.StringTerm("resources")
	keyNotReadySince   = ast.StringTerm("notReadySince")
	keyMemory          = ast.StringTerm("memory")
	keyRecreations     = ast.StringTerm("recreations")

	keyRequests   = ast.StringTerm("requests")
	keyLimits     = ast.StringTerm("limits")
	keyCPU        = ast.StringTerm("cpu")
	keyExitCode   = ast.StringTerm("exitCode")
	keyFinishedAt = ast.StringTerm("finishedAt")

	keyWorkingSetBytes           = ast.StringTerm("workingSetBytes")
	keySamples                   = ast.StringTerm("samples")
	keyWindowSeconds             = ast.StringTerm("windowSeconds")
	keySlopeBytesPerSecond       = ast.StringTerm("slopeBytesPerSecond")
	keyStartSlopeBytesPerSecond  = ast.StringTerm("startSlopeBytesPerSecond")
	keyEndSlopeBytesPerSecond    = ast.StringTerm("endSlopeBytesPerSecond")
	keyLatestSlopeBytesPerSecond = ast.StringTerm("latestSlopeBytesPerSecond")
	keyR2                        = ast.StringTerm("r2")
	keyTotal                     = ast.StringTerm("total")
	keyLast                      = ast.StringTerm("last")
)

// Values shared by every entry.
var (
	termContainer = ast.StringTerm("container")
	termSidecar   = ast.StringTerm("sidecar")
	stateTerms    = map[stateKind]*ast.Term{
		stateUnknown:    ast.StringTerm("unknown"),
		stateRunning:    ast.StringTerm("running"),
		stateWaiting:    ast.StringTerm("waiting"),
		stateTerminated: ast.StringTerm("terminated"),
	}
)

// lastTerminationTerm is the entry's lastTermination: null unless the
// status says how the container last ended.
func (f *containerFacts) lastTerminationTerm() *ast.Term {
	if !f.hasStatus || !f.terminated {
		return ast.InternedNullTerm
	}
	return ast.ObjectTerm(
		[2]*ast.Term{keyReason, ast.StringTerm(f.lastReason)},
		[2]*ast.Term{keyExitCode, ast.IntNumberTerm(int(f.lastExitCode))},
		[2]*ast.Term{keyStartedAt, nanoTimeTerm(f.lastStarted)},
		[2]*ast.Term{keyFinishedAt, nanoTimeTerm(f.lastFinished)},
	)
}

// values are the values of the entry the facts make, with the resources
// and lastTermination objects built from them: the candidate's entry adds
// the manager's history to them.
func (f *containerFacts) values(resources, lastTermination *ast.Term) entryValues {
	kind := termContainer
	if f.sidecar {
		kind = termSidecar
	}
	ready, started, startedAt, restarts := ast.InternedTerm(false), ast.InternedNullTerm, ast.InternedNullTerm, ast.InternedTerm(0)
	if f.hasStatus {
		ready = ast.InternedTerm(f.ready)
		if f.started >= 0 {
			started = ast.InternedTerm(f.started == 1)
		}
		startedAt = nanoTimeTerm(f.startedAt)
		restarts = ast.InternedTerm(int(f.restarts))
	}
	return entryValues{
		sharedTerms.string(f.name), kind, sharedTerms.string(f.image), resources, ready, started,
		stateTerms[f.state], startedAt, restarts, lastTermination,
	}
}

// term is a resource list with memory in bytes and cpu in millicores.
func (r resourceFacts) term() *ast.Term {
	obj := ast.NewObjectWithCapacity(2)
	if r.hasMemory {
		obj.Insert(keyMemory, intTerm(r.memory))
	}
	if r.hasCPU {
		obj.Insert(keyCPU, intTerm(r.milliCPU))
	}
	return ast.NewTerm(obj)
}

func intTerm(n int64) *ast.Term {
	return ast.NewTerm(ast.Number(strconv.FormatInt(n, 10)))
}

func nanoTimeTerm(ns int64) *ast.Term {
	if ns == 0 {
		return ast.InternedNullTerm
	}
	return timeTerm(time.Unix(0, ns))
}

func timeTerm(t time.Time) *ast.Term {
	if t.IsZero() {
		return ast.InternedNullTerm
	}
	return ast.StringTerm(t.UTC().Format(time.RFC3339Nano))
}
