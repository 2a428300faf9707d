package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// rollOut asks the manager for a rolling restart of the target's pods:
// it writes the restart policy (or, for rp/NAME, the policy's restartAt)
// and, with --wait, follows the run.
func (r *restart) rollOut(ctx context.Context, cl *clients, t *target, dry dryRun) error {
	pods, err := t.pods(ctx, cl)
	if err != nil {
		return err
	}
	if len(pods) == 0 {
		return fmt.Errorf("%s in namespace %s has no running pod to restart", t, t.namespace)
	}
	at := metav1.NewTime(r.now().UTC().Truncate(time.Second))
	var p *v1alpha1.RecreatePolicy
	// change is what the command does to a policy that exists; the write
	// does it again to the latest policy should the manager write the
	// policy's status in between.
	var change func(*v1alpha1.RecreatePolicy) error
	op := "created"
	if t.policy != nil {
		if len(r.containers) > 0 || r.maxUnavailable != "" || r.graceSet {
			return usageError("%s restarts the containers its spec names, with its own rollout and unready grace; change those in the policy", t)
		}
		p, op = t.policy, "restarted"
		change = func(cur *v1alpha1.RecreatePolicy) error {
			if err := restartable(cur); err != nil {
				return err
			}
			cur.Spec.RestartAt = &at
			return nil
		}
		if err := change(p); err != nil {
			return err
		}
	} else {
		if p, err = r.restartPolicy(t, at); err != nil {
			return err
		}
		if err := namedRestartable(p.Spec.Containers, pods); err != nil {
			return err
		}
		if unmatched := policyspec.Containers(p.Spec.Containers).Unmatched(pods); len(unmatched) > 0 {
			return fmt.Errorf("%s: no pod has a container that -c %s names; the containers are %s", t, strings.Join(unmatched, ", "), strings.Join(policyspec.Containers(nil).Matching(&pods[0]), ", "))
		}
		existing := &v1alpha1.RecreatePolicy{}
		switch err := cl.client.Get(ctx, client.ObjectKeyFromObject(p), existing); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("read RecreatePolicy %s/%s: %w", p.Namespace, p.Name, err)
		default:
			want := p
			change = func(cur *v1alpha1.RecreatePolicy) error {
				if cur.Labels[v1beta1.SourceLabel] != v1beta1.SourceKubectl {
					return fmt.Errorf("RecreatePolicy %s/%s exists and was not written by kubectl rejuv; restart its pods with kubectl rejuv restart rp/%s", cur.Namespace, cur.Name, cur.Name)
				}
				if err := restartable(cur); err != nil {
					return err
				}
				cur.Labels, cur.Annotations, cur.OwnerReferences = want.Labels, want.Annotations, want.OwnerReferences
				cur.Spec = *want.Spec.DeepCopy()
				return nil
			}
			if err := change(existing); err != nil {
				return err
			}
			p, op = existing, "configured"
		}
	}
	warnUngated(r.o.Streams.ErrOut, t, pods, policyspec.UnreadyGrace(p.Spec.Recreate.Strategy))
	if err := r.write(ctx, cl, p, op, dry, change); err != nil {
		return err
	}
	if ahead := clockAhead(p, r.manager, at.Time); ahead > 2*time.Second {
		fmt.Fprintf(r.o.Streams.ErrOut, "this machine's clock is %s ahead of the API server's: the restart starts when the cluster's clock reaches %s\n",
			ahead.Round(time.Second), at.UTC().Format(time.RFC3339))
	}
	p.SetGroupVersionKind(v1alpha1.GroupVersion.WithKind("RecreatePolicy"))
	r.print.NamePrintFlags.Operation = op + dry.suffix()
	printer, err := r.print.ToPrinter()
	if err != nil {
		return err
	}
	if err := printer.PrintObj(p, r.o.Streams.Out); err != nil {
		return err
	}
	if !r.printsNames() {
		return nil
	}
	maxUnavailable := policyspec.DefaultMaxUnavailable
	if mu := p.Spec.Rollout.MaxUnavailable; mu != nil {
		maxUnavailable, _ = policyspec.ParseMaxUnavailable(mu, field.NewPath("spec", "rollout", "maxUnavailable"))
	}
	verb := "requested"
	if dry != dryRunNone {
		verb = "would be requested"
	}
	fmt.Fprintf(r.o.Streams.Out, "rolling restart of %d pods of %s %s, at most %d unavailable at a time: %s\n", len(pods), t, verb, maxUnavailable.Of(len(pods)), podNames(pods))
	if !r.wait {
		if dry == dryRunNone {
			fmt.Fprintf(r.o.Streams.Out, "follow it with: kubectl rejuv status rp/%s -n %s\n", p.Name, p.Namespace)
		}
		return nil
	}
	return r.followRun(ctx, cl, t, p, at.Time)
}

// printsNames says whether the output is the default one, after which the
// command may say more; -o json, yaml and the like print the object only.
func (r *restart) printsNames() bool {
	return r.print.OutputFormat == nil || *r.print.OutputFormat == "" || *r.print.OutputFormat == "name"
}

// restartPolicy is the policy that restarts a workload or the pods of a
// selector once, at at.
func (r *restart) restartPolicy(t *target, at metav1.Time) (*v1alpha1.RecreatePolicy, error) {
	mu := t.maxUnavailable
	if r.maxUnavailable != "" {
		v := intstr.Parse(r.maxUnavailable)
		if _, errs := policyspec.ParseMaxUnavailable(&v, field.NewPath("--max-unavailable")); len(errs) > 0 {
			return nil, usageError("%s", errs.ToAggregate().Error())
		}
		mu = &v
	} else if zeroBudget(mu) {
		// A workload that surges instead: an in-place restart cannot.
		fmt.Fprintf(r.o.Streams.ErrOut, "%s allows no unavailable pod (maxUnavailable %s); restarting one pod at a time (--max-unavailable to choose)\n", t, mu.String())
		mu = new(intstr.FromInt32(1))
	}
	reason := r.reason
	if reason == "" {
		reason = "restarted with kubectl rejuv restart " + t.String()
	}
	p := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   t.namespace,
			Name:        t.restartPolicyName(),
			Labels:      map[string]string{v1beta1.SourceLabel: v1beta1.SourceKubectl},
			Annotations: map[string]string{v1beta1.ReasonAnnotation: reason},
		},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector:   *t.selector.DeepCopy(),
			Containers: trimAll(r.containers),
			RestartAt:  &at,
			Recreate: v1alpha1.RecreateTemplate{
				ActiveDeadlineSeconds: new(int64(r.deadline / time.Second)),
				Strategy:              &v1beta1.ContainerRecreateRequestStrategy{UnreadyGracePeriodSeconds: new(r.graceSeconds())},
			},
			Rollout: v1alpha1.Rollout{MaxUnavailable: mu, OnFailure: v1alpha1.RolloutHalt},
		},
	}
	if t.owner != nil {
		// The workload's garbage collection takes its restart policy
		// with it; not as controller, which the workload's own
		// controller would take for its own.
		p.OwnerReferences = []metav1.OwnerReference{*t.owner}
	}
	return p, nil
}

func zeroBudget(v *intstr.IntOrString) bool {
	return v != nil && ((v.Type == intstr.Int && v.IntVal == 0) || (v.Type == intstr.String && strings.TrimSuffix(v.StrVal, "%") == "0"))
}

// restartable refuses a policy that cannot start a restart now.
func restartable(p *v1alpha1.RecreatePolicy) error {
	if run := p.Status.Run; run != nil && run.State == v1alpha1.RunRunning {
		return fmt.Errorf("RecreatePolicy %s/%s is in the middle of a rolling restart (%d of %d pods, started %s); follow it with kubectl rejuv status rp/%s",
			p.Namespace, p.Name, run.Recreated, run.ToRecreate(), run.ScheduledTime.UTC().Format(time.RFC3339), p.Name)
	}
	if p.Spec.Suspend {
		return fmt.Errorf("RecreatePolicy %s/%s is suspended: set spec.suspend to false first", p.Namespace, p.Name)
	}
	return nil
}

// write creates or updates the policy, unless the dry run is the
// client's. An update that loses to another writer (the manager writes the
// policy's status after every pass) reads the policy again and makes
// change to it again, checks included, until it is written.
func (r *restart) write(ctx context.Context, cl *clients, p *v1alpha1.RecreatePolicy, op string, dry dryRun, change func(*v1alpha1.RecreatePolicy) error) error {
	if dry == dryRunClient {
		return nil
	}
	if op == "created" {
		if err := cl.client.Create(ctx, p, dry.createOptions(r.manager, "Strict")...); err != nil {
			return fmt.Errorf("write RecreatePolicy %s/%s: %w", p.Namespace, p.Name, err)
		}
		return nil
	}
	opts := []client.UpdateOption{client.FieldOwner(r.manager)}
	if dry == dryRunServer {
		opts = append(opts, client.DryRunAll)
	}
	key := client.ObjectKeyFromObject(p)
	err := cl.client.Update(ctx, p, opts...)
	for attempt := 1; apierrors.IsConflict(err) && attempt < maxWriteAttempts; attempt++ {
		latest := &v1alpha1.RecreatePolicy{}
		if err := cl.client.Get(ctx, key, latest); err != nil {
			return fmt.Errorf("read RecreatePolicy %s again: %w", key, err)
		}
		if err := change(latest); err != nil {
			return err
		}
		*p = *latest
		err = cl.client.Update(ctx, p, opts...)
	}
	if apierrors.IsConflict(err) {
		return fmt.Errorf("RecreatePolicy %s changed %d times while it was being written; run the command again", key, maxWriteAttempts)
	}
	if err != nil {
		return fmt.Errorf("write RecreatePolicy %s: %w", key, err)
	}
	return nil
}

// maxWriteAttempts bounds how often write tries an update that other
// writers keep overtaking.
const maxWriteAttempts = 10

// podNames lists the pods' names, the first ten of them.
func podNames(pods []corev1.Pod) string {
	var names []string
	for i := range pods {
		if i == 10 {
			names = append(names, fmt.Sprintf("and %d more", len(pods)-10))
			break
		}
		names = append(names, pods[i].Name)
	}
	return strings.Join(names, ", ")
}

// clockAhead is how far at (this machine's clock) is ahead of the time
// the API server recorded for the manager's write of p, or 0.
func clockAhead(p *v1alpha1.RecreatePolicy, manager string, at time.Time) time.Duration {
	for _, f := range p.ManagedFields {
		if f.Manager == manager && f.Time != nil && at.After(f.Time.Time) {
			return at.Sub(f.Time.Time)
		}
	}
	return 0
}

// namedRestartable refuses containers named with -c that the kubelet would
// not start again once stopped in one of the pods, as restart POD -c does:
// a run would only skip them. Containers left to the default are not
// named; the run skips those, with a decision.
func namedRestartable(patterns []string, selected []corev1.Pod) error {
	if len(patterns) == 0 {
		return nil
	}
	for i := range selected {
		pod := &selected[i]
		if left := policyspec.Containers(patterns).Unrestartable(pod); len(left) > 0 {
			return fmt.Errorf("pod %s/%s: %s", pod.Namespace, pod.Name, pods.UnrestartableAll(pod, left))
		}
	}
	return nil
}
