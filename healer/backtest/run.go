package backtest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/recreatepolicy"
	"github.com/rejuv-dev/rejuv/healer/workingset"
	"github.com/rejuv-dev/rejuv/policy"
)

// Options are how a backtest reads history and keeps windows.
type Options struct {
	// Interval and Window are the manager's sampler's: a sample every
	// Interval, windows spanning Window (workingset.DefaultInterval and
	// DefaultWindow when zero).
	Interval, Window time.Duration
	// Chunk is how much history is read at once (DefaultChunk when zero):
	// the samples of one chunk are all a backtest holds.
	Chunk time.Duration
	// Variant names the parameters the policy carries, for the report.
	Variant string
}

// DefaultChunk is how much history a backtest reads at once: an hour of
// every selected container's samples.
const DefaultChunk = time.Hour

// evaluationDeadline bounds one pod's evaluation in a replay: a replay
// judges verdicts, not speed, and a loaded machine must not stop a rule
// the manager would not.
const evaluationDeadline = time.Minute

// Run replays policy p over src's history of [from, to): the manager's
// sampler takes a sample of every selected container every Interval, from
// a window's span before from (so that the windows are full at from, as
// a manager's that ran all along), and a pass of the policy runs every
// spec.evaluationInterval from from on.
func Run(ctx context.Context, p *v1alpha1.RecreatePolicy, src Source, from, to time.Time, opt Options) (*Report, error) {
	opt = opt.withDefaults()
	if !to.After(from) {
		return nil, fmt.Errorf("backtest of RecreatePolicy %s/%s: the period from %s to %s is empty", p.Namespace, p.Name, from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	}
	engine := policy.NewEngine(policy.Options{Deadline: evaluationDeadline})
	replay, err := recreatepolicy.NewReplay(ctx, p, engine)
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(&p.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("backtest of RecreatePolicy %s/%s: spec.selector: %w", p.Namespace, p.Name, err)
	}
	start := from.Add(-opt.Window)
	recs, coverage, err := src.Pods(ctx, p.Namespace, sel, start, to)
	if err != nil {
		return nil, fmt.Errorf("backtest of RecreatePolicy %s/%s: read the pods of history: %w", p.Namespace, p.Name, err)
	}
	b := &backtest{
		p: p, src: src, replay: replay, opt: opt, from: from, to: to,
		windows: newWindows(opt.Interval, opt.Window),
		report: &Report{Policy: p.Namespace + "/" + p.Name, Variant: opt.Variant, From: from, To: to,
			Interval: metav1.Duration{Duration: opt.Interval}, Window: metav1.Duration{Duration: opt.Window},
			Coverage: coverage, NotReplayed: notReplayed(p, coverage.Readiness), Held: map[string]int{}},
		results: map[resultKey]*ContainerResult{},
	}
	for i := range recs {
		b.states = append(b.states, newPodState(&recs[i]))
	}
	if err := b.run(ctx, start); err != nil {
		return nil, err
	}
	b.finish()
	return b.report, nil
}

func (o Options) withDefaults() Options {
	if o.Interval <= 0 {
		o.Interval = workingset.DefaultInterval
	}
	if o.Window <= 0 {
		o.Window = workingset.DefaultWindow
	}
	if o.Chunk <= 0 {
		o.Chunk = DefaultChunk
	}
	return o
}

// backtest is one run's state.
type backtest struct {
	p        *v1alpha1.RecreatePolicy
	src      Source
	replay   *recreatepolicy.Replay
	opt      Options
	from, to time.Time
	states   []*podState
	windows  *windows
	report   *Report
	results  map[resultKey]*ContainerResult
	failures map[string]bool
}

// run reads history chunk by chunk from start and replays it: the
// sampler's ticks and the policy's passes in time order (a tick before a
// pass at the same time).
func (b *backtest) run(ctx context.Context, start time.Time) error {
	tick, pass := start, b.from
	every := b.replay.EvaluationInterval()
	for chunk := start; chunk.Before(b.to); chunk = chunk.Add(b.opt.Chunk) {
		end := minTime(chunk.Add(b.opt.Chunk), b.to)
		samples, ready, err := b.read(ctx, chunk, end)
		if err != nil {
			return err
		}
		cur := cursors{samples: samples, at: map[ContainerRef]int{}, ready: ready, readyAt: map[ContainerRef]int{}}
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			if !tick.After(pass) && tick.Before(end) {
				b.sample(tick, &cur)
				tick = tick.Add(b.opt.Interval)
			} else if pass.Before(end) {
				b.pass(ctx, pass)
				pass = pass.Add(every)
			} else {
				break
			}
		}
	}
	return nil
}

// read is the samples of the pods alive in the chunk [from, to), and of
// the two intervals before it (a tick takes the newest sample of the last
// two intervals), and their readiness when history holds it.
func (b *backtest) read(ctx context.Context, from, to time.Time) (map[ContainerRef][]workingset.Sample, map[ContainerRef][]ReadySample, error) {
	since := from.Add(-2 * b.opt.Interval)
	var names []string
	for _, s := range b.states {
		known := s.rec.To.IsZero() && (s.lastSample.IsZero() || since.Sub(s.lastSample) < GoneAfter)
		if s.rec.From.Before(to) && (known || s.rec.To.After(since)) {
			names = append(names, s.rec.Pod.Name)
		}
	}
	if len(names) == 0 {
		return nil, nil, nil
	}
	slices.Sort(names)
	names = slices.Compact(names)
	period := since.UTC().Format(time.RFC3339) + " to " + to.UTC().Format(time.RFC3339)
	samples, err := b.src.WorkingSet(ctx, b.p.Namespace, names, since, to)
	if err != nil {
		return nil, nil, fmt.Errorf("backtest of RecreatePolicy %s/%s: read the working set from %s: %w", b.p.Namespace, b.p.Name, period, err)
	}
	rs, ok := b.src.(ReadinessSource)
	if !ok || !b.report.Coverage.Readiness {
		return samples, nil, nil
	}
	ready, err := rs.Readiness(ctx, b.p.Namespace, names, from, to)
	if err != nil {
		return nil, nil, fmt.Errorf("backtest of RecreatePolicy %s/%s: read the readiness from %s: %w", b.p.Namespace, b.p.Name, period, err)
	}
	return samples, ready, nil
}

// cursors walk a chunk's samples: at is, per container, the first sample
// a tick may still take.
type cursors struct {
	samples map[ContainerRef][]workingset.Sample
	at      map[ContainerRef]int
	// ready is the readiness read, readyAt the first sample a tick has
	// not yet taken.
	ready   map[ContainerRef][]ReadySample
	readyAt map[ContainerRef]int
}

// readiness is the container's newest readiness recorded up to t, ok
// false when none was since the last tick's. Ticks come in time order.
func (c *cursors) readiness(ref ContainerRef, t time.Time) (ready, ok bool) {
	list := c.ready[ref]
	i := c.readyAt[ref]
	for ; i < len(list) && !list[i].Time.After(t); i++ {
		ready, ok = list[i].Ready, true
	}
	c.readyAt[ref] = i
	return ready, ok
}

// newest is the newest sample of the container's in (t-span, t] that
// keep accepts; ok is false when there is none. latest is the time of the
// newest sample in it, accepted or not. Ticks come in time order.
func (c *cursors) newest(ref ContainerRef, t time.Time, span time.Duration, keep func(*workingset.Sample) bool) (out workingset.Sample, latest time.Time, ok bool) {
	list := c.samples[ref]
	i := c.at[ref]
	oldest := t.Add(-span)
	for i < len(list) && !list[i].Time.After(oldest) {
		i++
	}
	c.at[ref] = i
	for ; i < len(list) && !list[i].Time.After(t); i++ {
		latest = list[i].Time
		if keep(&list[i]) {
			out, ok = list[i], true
		}
	}
	return out, latest, ok
}

// sample is the sampler's tick at t: each running container of each pod
// that may have samples takes the newest sample of its instance of the
// last two intervals, as the manager's sampler does.
func (b *backtest) sample(t time.Time, cur *cursors) {
	b.windows.sampled = t
	for _, s := range b.states {
		if !s.sampled(t) {
			continue
		}
		if s.built && !s.alive(t) {
			b.windows.forget(s.rec.Pod.UID)
		}
		for i := range s.containers {
			if ready, ok := cur.readiness(ContainerRef{Pod: s.rec.Pod.Name, Container: s.rec.Containers[i].Name}, t); ok {
				s.ready(i, ready)
			}
		}
		s.at(t)
		for i := range s.containers {
			name := s.rec.Containers[i].Name
			in := s.instance(i)
			sm, latest, ok := cur.newest(ContainerRef{Pod: s.rec.Pod.Name, Container: name}, t, 2*b.opt.Interval, func(sm *workingset.Sample) bool {
				return in != nil && (sm.ContainerID == "" || sm.ContainerID == in.ID) && !sm.Time.Before(in.Started)
			})
			s.lastSample = maxTime(s.lastSample, latest)
			if ok {
				b.windows.track(s.rec.Pod.UID, name).Add(in.ID, sm.Time, sm.Bytes)
			}
		}
	}
}

// pass is a pass of the policy at t over the pods alive then; what it
// admits is recreated.
func (b *backtest) pass(ctx context.Context, t time.Time) {
	var pods []corev1.Pod
	byName := map[string]*podState{}
	for _, s := range b.states {
		if s.alive(t) {
			pods = append(pods, *s.at(t))
			byName[s.rec.Pod.Name] = s
			s.judged = true
		}
	}
	if len(pods) == 0 {
		return
	}
	out := b.replay.Pass(ctx, t, pods, b.windows)
	if out.Failures != "" && len(b.failures) < maxFailures {
		if b.failures == nil {
			b.failures = map[string]bool{}
		}
		if !b.failures[out.Failures] {
			b.failures[out.Failures] = true
			b.report.Failures = append(b.report.Failures, t.UTC().Format(time.RFC3339)+": "+out.Failures)
		}
	}
	for _, d := range out.Decisions {
		if d.Outcome != v1alpha1.OutcomeCreated {
			b.report.Held[string(d.Outcome)]++
			continue
		}
		s := byName[d.Pod]
		if s == nil {
			continue
		}
		for _, name := range d.Containers {
			b.recreated(s, name, t, d)
		}
	}
}

// maxFailures bounds the evaluation errors a report keeps.
const maxFailures = 10

// recreated records the recreation of a pod's container at t, and
// restarts its window.
func (b *backtest) recreated(s *podState, name string, t time.Time, d v1alpha1.Decision) {
	i := slices.IndexFunc(s.rec.Containers, func(c Container) bool { return c.Name == name })
	if i < 0 || s.instance(i) == nil {
		return
	}
	c := &s.containers[i]
	started := s.instance(i).Started
	if c.recreated > 0 {
		started = c.lastRecreated
	}
	rec := Recreation{At: t, Age: metav1.Duration{Duration: t.Sub(started)}, Rule: strings.TrimPrefix(d.Trigger, "rule/"), Reason: d.Reason, instance: c.running}
	track := b.windows.track(s.rec.Pod.UID, name)
	if m := track.Summary(); m != nil {
		rec.WorkingSetBytes = m.WorkingSetBytes
	}
	res := b.result(s, name)
	res.Recreations = append(res.Recreations, rec)
	s.recreate(name, t)
	track.Restart(t)
}

// resultKey names a container of a pod by the pod's UID: pods of one
// name come and go.
type resultKey struct {
	pod       types.UID
	container string
}

// result is the container's result, new at its first recreation or kill.
func (b *backtest) result(s *podState, name string) *ContainerResult {
	key := resultKey{s.rec.Pod.UID, name}
	if r := b.results[key]; r != nil {
		return r
	}
	r := &ContainerResult{Pod: s.rec.Pod.Name, Container: name, LimitBytes: memoryLimit(s.rec.Pod, name)}
	b.results[key] = r
	return r
}

// finish adds the OOM kills of the period to the results, marks the kills
// caught and the recreations needed, and sums the report up.
func (b *backtest) finish() {
	containers := 0
	for _, s := range b.states {
		if !s.judged {
			continue
		}
		b.report.Pods++
		containers += len(s.rec.Containers)
		for i := range s.rec.Containers {
			c := &s.rec.Containers[i]
			res := b.results[resultKey{s.rec.Pod.UID, c.Name}]
			for k, in := range c.Instances {
				if in.Reason != OOMKilled || in.Ended.IsZero() || in.Ended.Before(b.from) || !in.Ended.Before(b.to) {
					continue
				}
				if res == nil {
					res = b.result(s, c.Name)
				}
				kill := Kill{At: in.Ended, Age: metav1.Duration{Duration: in.Ended.Sub(in.Started)}}
				for j := range res.Recreations {
					if rec := &res.Recreations[j]; rec.instance == k {
						rec.Needed = true
						if !kill.Caught {
							kill.Caught, kill.LeadTime = true, &metav1.Duration{Duration: in.Ended.Sub(rec.At)}
						}
					}
				}
				res.Kills = append(res.Kills, kill)
			}
		}
	}
	b.report.Containers = containers
	for _, r := range b.results {
		b.report.Results = append(b.report.Results, *r)
	}
	slices.SortFunc(b.report.Results, func(x, y ContainerResult) int {
		return strings.Compare(x.Pod+"\x00"+x.Container, y.Pod+"\x00"+y.Container)
	})
	b.report.summarize()
}

// memoryLimit is the container's memory limit in bytes, 0 for none.
func memoryLimit(pod *corev1.Pod, name string) int64 {
	for _, c := range pod.Spec.Containers {
		if c.Name == name {
			if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
				return q.Value()
			}
		}
	}
	return 0
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
