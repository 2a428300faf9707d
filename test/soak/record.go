package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/soak/invariant"
)

// recorder writes the run's evidence: soak.log (what the soak did, also
// printed) and events.log (a line per observation, as the checker saw
// them).
type recorder struct {
	dir string

	mu        sync.Mutex
	start     time.Time
	observing bool
	log       *os.File
	events    *bufio.Writer
	file      *os.File
}

func newRecorder(dir string) (*recorder, error) {
	log, err := os.Create(filepath.Join(dir, "soak.log"))
	if err != nil {
		return nil, err
	}
	events, err := os.Create(filepath.Join(dir, "events.log"))
	if err != nil {
		_ = log.Close()
		return nil, err
	}
	return &recorder{dir: dir, start: time.Now(), log: log, events: bufio.NewWriterSize(events, 1<<20), file: events}, nil
}

func (r *recorder) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.events.Flush()
	_ = r.file.Close()
	_ = r.log.Close()
}

// offset is t as seconds since the first observation (the checker's
// evidence counts from it too), or since the recorder started before
// any.
func (r *recorder) offset(t time.Time) string {
	return fmt.Sprintf("%+.1fs", t.Sub(r.start).Seconds())
}

// logf writes a line of what the soak did to soak.log and standard output.
func (r *recorder) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	line := fmt.Sprintf("%s %s\n", r.offset(time.Now()), fmt.Sprintf(format, args...))
	_, _ = r.log.WriteString(line)
	fmt.Print(line)
}

// observed writes a line for obs to events.log.
func (r *recorder) observed(obs invariant.Observation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.observing {
		r.observing, r.start = true, obs.When()
	}
	fmt.Fprintf(r.events, "%s %s\n", r.offset(obs.When()), describe(obs))
}

// describe is one line of what an observation says.
func describe(obs invariant.Observation) string {
	gone := func(g bool) string {
		if g {
			return " GONE"
		}
		return ""
	}
	switch o := obs.(type) {
	case invariant.PodSeen:
		return fmt.Sprintf("pod %s/%s %s %s ready=%s gate=%s node=%s ip=%s%s%s", o.Pod.Namespace, o.Pod.Name, short(string(o.Pod.UID)), o.Pod.Status.Phase,
			condition(o.Pod, corev1.PodReady), condition(o.Pod, v1beta1.PodReadyCondition), o.Pod.Spec.NodeName, o.Pod.Status.PodIP, containers(o.Pod), gone(o.Gone))
	case invariant.ComponentSeen:
		return fmt.Sprintf("component %s %s ready=%s node=%s ip=%s%s%s", o.Pod.Name, short(string(o.Pod.UID)), condition(o.Pod, corev1.PodReady), o.Pod.Spec.NodeName, o.Pod.Status.PodIP, containers(o.Pod), gone(o.Gone))
	case invariant.RequestSeen:
		q := o.Request
		return fmt.Sprintf("request %s/%s pod=%s phase=%s result=%s policy=%s run=%s message=%q%s", q.Namespace, q.Name, q.Spec.PodName, q.Status.Phase, q.Status.Result,
			q.Labels[v1beta1.PolicyLabel], q.Annotations[v1beta1.RunAnnotation], q.Status.Message, gone(o.Gone))
	case invariant.PolicySeen:
		p := o.Policy
		run := "none"
		if p.Status.Run != nil {
			run = fmt.Sprintf("%s %s pods=%d recreated=%d upToDate=%d", p.Status.Run.ScheduledTime.UTC().Format(time.RFC3339), p.Status.Run.State, p.Status.Run.Pods, p.Status.Run.Recreated, p.Status.Run.UpToDate)
		}
		var conditions strings.Builder
		for _, c := range p.Status.Conditions {
			if c.Status == metav1.ConditionTrue || c.Type == v1alpha1.ConditionReady {
				fmt.Fprintf(&conditions, " %s=%s/%s", c.Type, c.Status, c.Reason)
			}
		}
		last := ""
		if n := len(p.Status.RecentDecisions); n > 0 {
			d := p.Status.RecentDecisions[n-1]
			last = fmt.Sprintf(" last=%s:%s", d.Pod, d.Outcome)
		}
		return fmt.Sprintf("policy %s/%s generation=%d observed=%d run=%s%s%s%s", p.Namespace, p.Name, p.Generation, p.Status.ObservedGeneration, run, conditions.String(), last, gone(o.Gone))
	case invariant.BudgetSeen:
		b := o.Budget
		return fmt.Sprintf("budget %s/%s allowed=%d healthy=%d desired=%d disrupted=%d%s", b.Namespace, b.Name, b.Status.DisruptionsAllowed, b.Status.CurrentHealthy, b.Status.DesiredHealthy, len(b.Status.DisruptedPods), gone(o.Gone))
	case invariant.FaultStarted:
		return fmt.Sprintf("fault %d started: %s: %s", o.ID, o.Kind, o.Target)
	case invariant.FaultEnded:
		return fmt.Sprintf("fault %d ended", o.ID)
	case invariant.ClientFailed:
		return fmt.Sprintf("client of %s failed: %s", o.Service, o.Err)
	case invariant.Panic:
		return fmt.Sprintf("panic in %s: %s", o.Pod, o.Line)
	}
	return fmt.Sprintf("%T", obs)
}

func short(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

// condition is the status of p's condition of type t, "-" when it has
// none.
func condition(p *corev1.Pod, t corev1.PodConditionType) string {
	if c := pods.Condition(p, t); c != nil {
		return string(c.Status)
	}
	return "-"
}

// containers lists each container's ID (12 characters) and restart count.
func containers(p *corev1.Pod) string {
	var s strings.Builder
	for _, c := range p.Status.ContainerStatuses {
		id := c.ContainerID
		if i := len(id) - 64; i > 0 {
			id = id[i:]
		}
		if len(id) > 12 {
			id = id[:12]
		}
		fmt.Fprintf(&s, " %s=%s/%d", c.Name, id, c.RestartCount)
	}
	return s.String()
}
