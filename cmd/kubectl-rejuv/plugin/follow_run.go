package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/planner"
)

// runFollower turns what it reads of a policy's run and requests into
// events, each said once.
type runFollower struct {
	p        *progress
	at       time.Time
	requests map[string]v1beta1.ContainerRecreateRequestPhase
	// holds are the gates seen holding each pod back: each is said once
	// per pod, as a pod may go back and forth between two of them.
	holds map[string]map[v1alpha1.DecisionOutcome]bool
	// backedOff are the requests said to wait for the kubelet's back-off.
	backedOff map[string]bool
	waiting   bool
	started   bool
}

// followRun follows the run restartAt at asked of policy p until it
// completes or halts.
func (r *restart) followRun(ctx context.Context, cl *clients, t *target, p *v1alpha1.RecreatePolicy, at time.Time) error {
	f := &runFollower{
		p:  newProgress(r.o.Streams.Out, r.o.Terminal, t.String(), r.now),
		at: at, requests: map[string]v1beta1.ContainerRecreateRequestPhase{}, holds: map[string]map[v1alpha1.DecisionOutcome]bool{},
		backedOff: map[string]bool{},
	}
	defer f.p.finish()
	fctx, cancel := r.followCtx(ctx)
	defer cancel()
	var policy *v1alpha1.RecreatePolicy
	var requests []v1beta1.ContainerRecreateRequest
	lists := []watched{
		{list: &v1alpha1.RecreatePolicyList{}, opts: []client.ListOption{client.InNamespace(p.Namespace), client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", p.Name)}}},
		{list: &v1beta1.ContainerRecreateRequestList{}, opts: []client.ListOption{client.InNamespace(p.Namespace), client.MatchingLabels{v1beta1.PolicyLabel: p.Name}}},
	}
	var outcome error
	err := follow(fctx, cl.client, lists, time.Second, func(ctx context.Context) (bool, error) {
		// What was read last is kept for the interrupt's message: a read
		// the interrupt cuts short replaces nothing.
		cur := &v1alpha1.RecreatePolicy{}
		if err := cl.client.Get(ctx, client.ObjectKeyFromObject(p), cur); err != nil {
			return false, fmt.Errorf("read RecreatePolicy %s/%s: %w", p.Namespace, p.Name, err)
		}
		list := &v1beta1.ContainerRecreateRequestList{}
		if err := cl.client.List(ctx, list, client.InNamespace(p.Namespace), client.MatchingLabels{v1beta1.PolicyLabel: p.Name}); err != nil {
			return false, fmt.Errorf("list the requests of RecreatePolicy %s/%s: %w", p.Namespace, p.Name, err)
		}
		policy, requests = cur, ofRun(list.Items, at)
		done, err := f.step(policy, requests)
		outcome = err
		return done, nil
	})
	if err != nil {
		if ctx.Err() == nil && fctx.Err() == nil {
			return err
		}
		f.p.finish()
		fmt.Fprintf(r.o.Streams.ErrOut, "%s: %s\n", r.stopped(err), inFlightText(policy, requests))
		fmt.Fprintf(r.o.Streams.ErrOut, "the restart goes on in the cluster; follow it: kubectl rejuv status rp/%s -n %s; stop it: kubectl patch rp %s -n %s --type merge -p '{\"spec\":{\"suspend\":true}}'\n",
			p.Name, p.Namespace, p.Name, p.Namespace)
		return &FailedError{What: "stopped following the restart of " + t.String()}
	}
	return outcome
}

// ofRun keeps the requests of the run at at.
func ofRun(list []v1beta1.ContainerRecreateRequest, at time.Time) []v1beta1.ContainerRecreateRequest {
	var out []v1beta1.ContainerRecreateRequest
	key := at.UTC().Format(time.RFC3339)
	for _, r := range list {
		if r.Annotations[v1beta1.RunAnnotation] == key {
			out = append(out, r)
		}
	}
	return out
}

// step reports what changed; done when the run ended, with an error when
// it did not restart every pod.
func (f *runFollower) step(p *v1alpha1.RecreatePolicy, requests []v1beta1.ContainerRecreateRequest) (bool, error) {
	run := p.Status.Run
	if run == nil || !run.Requested || !run.ScheduledTime.Time.Equal(f.at) {
		if handled := p.Status.RestartedAt; handled != nil && !handled.Time.Before(f.at) {
			why := "the manager did not start it"
			for _, d := range p.Status.RecentDecisions {
				if d.Trigger == planner.Restart && d.Pod == "" {
					why = d.Message
					break
				}
			}
			f.p.event("restart not started: %s", why)
			return true, &FailedError{What: "restart not started"}
		}
		if !f.waiting && f.p.now().Sub(f.at) > 20*time.Second {
			f.waiting = true
			f.p.event("waiting for the Rejuv manager to start the restart: is it running? (kubectl get pods -A -l app.kubernetes.io/name=rejuv-healer)")
		}
		f.p.tick()
		return false, nil
	}
	if !f.started {
		f.started = true
		f.p.event("rolling restart of %d pods started", run.Pods)
	}
	inFlight, failed := 0, 0
	for _, r := range requests {
		phase := r.Status.Phase
		if phase == "" {
			phase = v1beta1.PhasePending
		}
		before, known := f.requests[r.Name]
		if !known {
			f.p.event("pod %s: recreating %s (containerrecreaterequest %s)", r.Spec.PodName, containerNames(&r), r.Name)
		}
		f.requests[r.Name] = phase
		if phase != v1beta1.PhaseCompleted {
			inFlight++
			f.tellBackOff(&r)
			continue
		}
		if r.Status.Result != v1beta1.ResultSucceeded {
			failed++
		}
		if before != v1beta1.PhaseCompleted {
			if r.Status.Result == v1beta1.ResultSucceeded {
				f.p.event("pod %s: recreated in %s", r.Spec.PodName, requestTook(&r))
			} else {
				f.p.event("pod %s: %s%s", r.Spec.PodName, r.Status.Result, suffixed(r.Status.Message))
			}
		}
	}
	f.holdEvents(p)
	f.p.counts(int(run.Recreated), int(run.ToRecreate()), inFlight, failed)
	switch run.State {
	case v1alpha1.RunCompleted:
		f.p.finish()
		took := run.CompletionTime.Sub(f.at).Round(time.Second)
		f.p.event("done: %d of %d pods recreated in %s, %d up to date, %d failed, %d skipped", run.Recreated, run.Pods, took, run.UpToDate, failed, run.Skipped)
		if failed > 0 {
			return true, &FailedError{What: fmt.Sprintf("%d pods failed", failed)}
		}
		return true, nil
	case v1alpha1.RunHalted:
		f.p.finish()
		f.p.event("halted after %d of %d pods: %s", run.Recreated, run.Pods, run.Message)
		return true, &FailedError{What: "the restart halted"}
	}
	return false, nil
}

// holdEvents says which pods a gate holds back, and by which, once per
// pod and gate. The run's decisions are told from an earlier run's by
// their reason, which names the run, not by their one-second time.
func (f *runFollower) holdEvents(p *v1alpha1.RecreatePolicy) {
	reason := planner.Trigger{Kind: planner.TriggerSchedule, Run: f.at, Requested: true}.RunReason()
	for _, d := range p.Status.RecentDecisions {
		if d.Trigger != planner.Restart || d.Pod == "" || d.Reason != reason {
			continue
		}
		if d.Outcome == v1alpha1.OutcomeCreated || f.holds[d.Pod][d.Outcome] {
			continue
		}
		if f.holds[d.Pod] == nil {
			f.holds[d.Pod] = map[v1alpha1.DecisionOutcome]bool{}
		}
		f.holds[d.Pod][d.Outcome] = true
		switch d.Outcome {
		case v1alpha1.OutcomeSkipped:
			f.p.event("pod %s: %s left alone: %s", d.Pod, strings.Join(d.Containers, ", "), d.Message)
			continue
		case v1alpha1.OutcomeUpToDate:
			f.p.event("pod %s: up to date: %s", d.Pod, d.Message)
			continue
		}
		f.p.event("pod %s: held back (%s): %s", d.Pod, d.Outcome, d.Message)
	}
}

func containerNames(r *v1beta1.ContainerRecreateRequest) string {
	names := make([]string, 0, len(r.Spec.Containers))
	for _, c := range r.Spec.Containers {
		names = append(names, c.Name)
	}
	return strings.Join(names, ", ")
}

// requestTook is how long a completed request took from its creation.
func requestTook(r *v1beta1.ContainerRecreateRequest) time.Duration {
	if r.Status.CompletionTime == nil {
		return 0
	}
	return r.Status.CompletionTime.Sub(r.CreationTimestamp.Time).Round(time.Second)
}

// inFlightText says how far a run got and what is still in flight.
func inFlightText(p *v1alpha1.RecreatePolicy, requests []v1beta1.ContainerRecreateRequest) string {
	var flying []string
	for _, r := range requests {
		if r.Status.Phase != v1beta1.PhaseCompleted {
			flying = append(flying, fmt.Sprintf("pod %s (containerrecreaterequest %s)", r.Spec.PodName, r.Name))
		}
	}
	done := "the restart has not started yet"
	if p != nil && p.Status.Run != nil {
		done = fmt.Sprintf("%d of %d pods recreated", p.Status.Run.Recreated, p.Status.Run.ToRecreate())
	}
	if len(flying) == 0 {
		return done + ", none in flight"
	}
	return done + "; in flight: " + strings.Join(flying, ", ")
}

// tellBackOff says, once per request, that a container of it waits for
// the kubelet's restart back-off: why its pod takes longer.
func (f *runFollower) tellBackOff(r *v1beta1.ContainerRecreateRequest) {
	if f.backedOff[r.Name] {
		return
	}
	for _, s := range r.Status.ContainerRecreateStates {
		if msg, ok := strings.CutPrefix(s.Message, v1beta1.BackOffMessage); ok {
			f.backedOff[r.Name] = true
			f.p.event("pod %s: container %s waits for the kubelet's restart back-off, as any container restarted less than 10 minutes before: %s", r.Spec.PodName, s.Name, msg)
			return
		}
	}
}
