package deploy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// panicMarks are what a panic leaves in a log: Go's own "panic:" (a crash,
// or the error controller-runtime makes of a reconciler's panic) and
// client-go's "Observed a panic" (one that was recovered).
var panicMarks = []string{"panic:", "Observed a panic"}

// Lines of a log kept in a finding: those after a panic's mark (its stack),
// the panics shown per container, and the end of a restarted container's
// previous log.
const (
	afterPanic      = 12
	panicsShown     = 3
	lineLength      = 2000
	previousLogTail = 25
)

// Health finds, over a run of tests, the faults of Rejuv's components that
// the tests' own checks may not see: a panic in a component's log
// (controller-runtime recovers a reconciler's panic and goes on, and what
// the reconciler had left to do, events and metrics, is lost without a
// trace) and a restart of a component's container (a replica that exits
// at start looks ready again by the time a test looks).
//
// Tests that restart a component, or the node's kubelet, containerd or API
// server, on purpose say so with Disturb. The restarts they cause are told
// apart by pod UID and container, never by time.
type Health struct {
	stack *Stack
	mu    sync.Mutex
	// allowed counts, by pod UID and container, the restarts that happened
	// while a test disturbed the stack on purpose.
	allowed map[string]int32
	// panics are those found in the logs read so far, by pod UID,
	// container and line: a pod deleted later takes its log with it.
	panics map[string]Finding
}

// Finding is a fault of one container of Rejuv's, with the log lines that
// show it.
type Finding struct {
	Pod, Container string
	What           string
	Lines          []string
}

func (f Finding) String() string {
	return fmt.Sprintf("pod %s/%s container %s %s:\n    %s", Namespace, f.Pod, f.Container, f.What, strings.Join(f.Lines, "\n    "))
}

// NewHealth starts looking at the stack as it is now: every restart of its
// containers from their start on counts, unless a Disturb allows it.
func NewHealth(s *Stack) *Health {
	return &Health{stack: s, allowed: map[string]int32{}, panics: map[string]Finding{}}
}

// Disturb is called right before a test disturbs the stack on purpose. It
// records how often each of Rejuv's containers has restarted, and reads
// their logs for panics (a pod the test deletes takes its log with it).
// The function it returns is called once the test is done: it waits until
// the stack is ready again and allows the restarts that happened between
// the two calls.
func (h *Health) Disturb(ctx context.Context) (func(context.Context) error, error) {
	pods, err := h.components(ctx)
	if err != nil {
		return nil, err
	}
	before := restartCounts(pods)
	if err := h.readLogs(ctx, pods); err != nil {
		return nil, err
	}
	return func(ctx context.Context) error {
		if err := h.stack.WaitReady(ctx); err != nil {
			return fmt.Errorf("after a test disturbed Rejuv on purpose: %w", err)
		}
		pods, err := h.components(ctx)
		if err != nil {
			return err
		}
		h.mu.Lock()
		defer h.mu.Unlock()
		for k, n := range restartCounts(pods) {
			if d := n - before[k]; d > 0 {
				h.allowed[k] += d
			}
		}
		return nil
	}, nil
}

// Check reads the logs of Rejuv's containers (a restarted one's previous
// log too) and returns what it and every Disturb found: each panic, and
// each container that restarted more often than the disturbances allow.
func (h *Health) Check(ctx context.Context) ([]Finding, error) {
	pods, err := h.components(ctx)
	if err != nil {
		return nil, err
	}
	if err := h.readLogs(ctx, pods); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Finding
	keys := make([]string, 0, len(h.panics))
	for k := range h.panics {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		out = append(out, h.panics[k])
	}
	for _, f := range unexpectedRestarts(pods, h.allowed) {
		log, err := h.log(ctx, f.Pod, f.Container, true)
		if err != nil {
			log = err.Error()
		}
		f.Lines = strings.Split(TailLines(log, previousLogTail), "\n")
		out = append(out, f)
	}
	return out, nil
}

// unexpectedRestarts finds the containers of pods that restarted more
// often than allowed (by pod UID and container) lets them.
func unexpectedRestarts(pods []corev1.Pod, allowed map[string]int32) []Finding {
	var out []Finding
	for i := range pods {
		p := &pods[i]
		for _, cs := range statuses(p) {
			if extra := cs.RestartCount - allowed[containerKey(p, cs.Name)]; extra > 0 {
				out = append(out, Finding{Pod: p.Name, Container: cs.Name,
					What: fmt.Sprintf("restarted %d time(s) that no test asked for (restartCount %d; last: %s); the end of its previous log", extra, cs.RestartCount, lastTermination(cs))})
			}
		}
	}
	return out
}

// components lists the manager's and the daemon's pods, terminating ones
// included.
func (h *Health) components(ctx context.Context) ([]corev1.Pod, error) {
	var out []corev1.Pod
	for _, sel := range []string{HealerSelector, DaemonSelector} {
		list, err := h.stack.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return nil, fmt.Errorf("list Rejuv's pods %s: %w", sel, err)
		}
		out = append(out, list.Items...)
	}
	return out, nil
}

// readLogs records the panics in the logs of pods' containers, and in the
// previous log of those that restarted.
func (h *Health) readLogs(ctx context.Context, pods []corev1.Pod) error {
	for i := range pods {
		p := &pods[i]
		for _, cs := range statuses(p) {
			if cs.State.Waiting != nil && cs.LastTerminationState.Terminated == nil {
				continue // never started: no log
			}
			for _, previous := range []bool{false, true} {
				if previous && cs.RestartCount == 0 {
					continue
				}
				log, err := h.log(ctx, p.Name, cs.Name, previous)
				if err != nil {
					if ctx.Err() != nil {
						return err
					}
					// A pod going away as it is read: what Check finds
					// of it is enough.
					continue
				}
				h.recordPanics(p, cs.Name, previous, log)
			}
		}
	}
	return nil
}

// recordPanics keeps the panics of one log that were not seen before.
func (h *Health) recordPanics(p *corev1.Pod, container string, previous bool, log string) {
	which := "its log"
	if previous {
		which = "the log before its last restart"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, lines := range panicsIn(log) {
		key := containerKey(p, container) + "/" + lines[0]
		if _, seen := h.panics[key]; !seen {
			h.panics[key] = Finding{Pod: p.Name, Container: container, What: "logged a panic, in " + which, Lines: lines}
		}
	}
}

// panicsIn finds the panics of a log, at most panicsShown of them, each as
// the line with its mark and the lines that follow it (a crash's stack),
// every line cut to lineLength (a recovered panic's line holds its stack).
func panicsIn(log string) [][]string {
	lines := strings.Split(log, "\n")
	var out [][]string
	for i, line := range lines {
		if len(out) == panicsShown {
			break
		}
		if !slices.ContainsFunc(panicMarks, func(m string) bool { return strings.Contains(line, m) }) {
			continue
		}
		shown := slices.Clone(lines[i:min(len(lines), i+1+afterPanic)])
		for j, l := range shown {
			if len(l) > lineLength {
				shown[j] = l[:lineLength] + " ..."
			}
		}
		out = append(out, shown)
	}
	return out
}

// log reads one container's log (previous: of its instance before the
// last restart).
func (h *Health) log(ctx context.Context, pod, container string, previous bool) (string, error) {
	b, err := h.stack.Kube.CoreV1().Pods(Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: container, Previous: previous}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("read the log of container %s of %s/%s (previous: %t): %w", container, Namespace, pod, previous, err)
	}
	return string(b), nil
}

// restartCounts are the restart counts of pods' containers by pod UID and
// container.
func restartCounts(pods []corev1.Pod) map[string]int32 {
	out := map[string]int32{}
	for i := range pods {
		for _, cs := range statuses(&pods[i]) {
			out[containerKey(&pods[i], cs.Name)] = cs.RestartCount
		}
	}
	return out
}

func statuses(p *corev1.Pod) []corev1.ContainerStatus {
	return append(slices.Clone(p.Status.InitContainerStatuses), p.Status.ContainerStatuses...)
}

// containerKey names a container of one pod, whatever its name: a pod
// recreated under the same name is another pod.
func containerKey(p *corev1.Pod, container string) string {
	return string(p.UID) + "/" + container
}

// lastTermination says how a container's previous instance ended.
func lastTermination(cs corev1.ContainerStatus) string {
	t := cs.LastTerminationState.Terminated
	if t == nil {
		return "unknown"
	}
	s := fmt.Sprintf("%s, exit code %d", t.Reason, t.ExitCode)
	if t.Message != "" {
		s += ": " + t.Message
	}
	return s
}
