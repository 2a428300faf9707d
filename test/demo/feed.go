package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// feed prints, as they appear, the policies' decisions and the
// requests' progress.
type feed struct {
	c        client.Client
	seen     map[string]bool
	phases   map[string]string
	asked    bool
	started  time.Time
	lastRuns map[string]string
	// last is the latest decision shown per policy, pod and trigger: a
	// candidate held back at every evaluation is shown once.
	last map[string]string
}

func newFeed(c client.Client) *feed {
	return &feed{c: c, seen: map[string]bool{}, phases: map[string]string{}, lastRuns: map[string]string{}, last: map[string]string{}}
}

// askAfter is when the demo plays an operator and annotates an api pod,
// for the custom rule.
const askAfter = 75 * time.Second

func (f *feed) run(ctx context.Context, duration time.Duration) error {
	f.started = time.Now()
	// What happened before this demo (an earlier make demo) is history:
	// count it, show what is new.
	quiet := func(string, string) {}
	if err := f.policies(ctx, quiet); err != nil {
		return err
	}
	if err := f.requests(ctx, quiet); err != nil {
		return err
	}
	if n := len(f.seen) + len(f.phases); n > 0 {
		line("history", fmt.Sprintf("%d decisions and %d requests from earlier are in the cluster; what happens now follows", len(f.seen), len(f.phases)))
	}
	end := time.After(duration)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-end:
			return nil
		case <-tick.C:
		}
		if !f.asked && time.Since(f.started) > askAfter {
			f.asked = true
			if err := f.ask(ctx); err != nil {
				return err
			}
		}
		if err := f.policies(ctx, line); err != nil {
			return err
		}
		if err := f.requests(ctx, line); err != nil {
			return err
		}
	}
}

// ask annotates the first api pod, as an operator would.
func (f *feed) ask(ctx context.Context) error {
	pods := &corev1.PodList{}
	if err := f.c.List(ctx, pods, client.InNamespace(namespace), client.MatchingLabels{"app": "api"}); err != nil {
		return err
	}
	if len(pods.Items) == 0 {
		return nil
	}
	pod := &pods.Items[0]
	patch := client.MergeFrom(pod.DeepCopy())
	if pod.Annotations == nil {
		pod.Annotations = map[string]string{}
	}
	pod.Annotations["rejuv.dev/restart-requested"] = "true"
	if err := f.c.Patch(ctx, pod, patch); err != nil {
		return fmt.Errorf("annotate pod %s: %w", pod.Name, err)
	}
	line("operator", "annotates pod "+pod.Name+" rejuv.dev/restart-requested=true (for the custom rule of rp/api-on-request)")
	return nil
}

func (f *feed) policies(ctx context.Context, line func(kind, msg string)) error {
	list := &v1alpha1.RecreatePolicyList{}
	if err := f.c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return err
	}
	for _, p := range list.Items {
		if run := p.Status.Run; run != nil {
			state := fmt.Sprintf("%s %s %d/%d", run.ScheduledTime.UTC().Format(time.RFC3339), run.State, run.Recreated, run.Pods)
			if f.lastRuns[p.Name] != state {
				f.lastRuns[p.Name] = state
				line("run", fmt.Sprintf("rp/%s: rolling restart of %s: %s, %d of %d pods recreated", p.Name, run.ScheduledTime.Local().Format("15:04:05"), run.State, run.Recreated, run.Pods))
			}
		}
		decisions := slices.Clone(p.Status.RecentDecisions)
		slices.Reverse(decisions)
		for _, d := range decisions {
			key := p.Name + "|" + d.Time.String() + "|" + d.Pod + "|" + d.Trigger + "|" + string(d.Outcome)
			if f.seen[key] {
				continue
			}
			f.seen[key] = true
			who := p.Name + "|" + d.Pod + "|" + d.Trigger
			if d.Outcome != v1alpha1.OutcomeCreated && f.last[who] == string(d.Outcome) {
				continue
			}
			f.last[who] = string(d.Outcome)
			what := fmt.Sprintf("rp/%s %s", p.Name, d.Trigger)
			if d.Pod != "" {
				what += fmt.Sprintf(": pod %s [%s]", d.Pod, strings.Join(d.Containers, ","))
			}
			switch d.Outcome {
			case v1alpha1.OutcomeCreated:
				line("decision", fmt.Sprintf("%s -> recreate (crr/%s) because %s", what, d.Request, d.Reason))
			case v1alpha1.OutcomeInFlight:
				// The request is followed below.
			default:
				line("decision", fmt.Sprintf("%s -> %s: %s", what, d.Outcome, d.Message))
			}
		}
	}
	return nil
}

func (f *feed) requests(ctx context.Context, line func(kind, msg string)) error {
	list := &v1beta1.ContainerRecreateRequestList{}
	if err := f.c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return err
	}
	for _, crr := range list.Items {
		phase := string(crr.Status.Phase)
		if phase == "" {
			phase = "Pending"
		}
		if f.phases[crr.Name] == phase {
			continue
		}
		f.phases[crr.Name] = phase
		msg := fmt.Sprintf("crr/%s pod %s: %s", crr.Name, crr.Spec.PodName, phase)
		if crr.Status.Phase == v1beta1.PhaseCompleted {
			took := ""
			if crr.Status.CompletionTime != nil {
				took = fmt.Sprintf(" after %s", crr.Status.CompletionTime.Sub(crr.CreationTimestamp.Time).Round(time.Second))
			}
			msg += fmt.Sprintf(", %s%s", crr.Status.Result, took)
			if crr.Status.Message != "" {
				msg += " (" + crr.Status.Message + ")"
			}
		}
		line("recreation", msg)
	}
	return nil
}

func line(kind, msg string) {
	fmt.Printf("%s  %-10s %s\n", time.Now().Format("15:04:05"), kind, msg)
}
