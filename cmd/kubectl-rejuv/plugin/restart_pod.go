package plugin

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// restartPod creates the request that restarts the pod's containers and,
// with --wait, follows it.
func (r *restart) restartPod(ctx context.Context, cl *clients, t *target, dry dryRun, printer printers.ResourcePrinter) error {
	if r.maxUnavailable != "" {
		return usageError("--max-unavailable limits a workload's rolling restart; %s is one pod", t)
	}
	containers, err := podContainers(t.pod, trimAll(r.containers))
	if err != nil {
		return err
	}
	warnLeftAlone(r.o.Streams.ErrOut, t.pod, trimAll(r.containers))
	warnUngated(r.o.Streams.ErrOut, t, []corev1.Pod{*t.pod}, r.graceSeconds())
	if err := noneInFlight(ctx, cl, t.pod.Namespace, t.pod.Name); err != nil {
		return err
	}
	terms := defaultTerms()
	terms.ActiveDeadlineSeconds = int64(r.deadline / time.Second)
	terms.Force = r.force
	terms.UnreadyGraceSeconds = r.graceSeconds()
	reason := r.reason
	if reason == "" {
		reason = "restarted with kubectl rejuv restart"
	}
	req := terms.request(t.pod, "", containers, reason)
	if dry != dryRunClient {
		if err := cl.client.Create(ctx, req, dry.createOptions(r.manager, "Strict")...); err != nil {
			return fmt.Errorf("create a ContainerRecreateRequest for pod %s/%s: %w", t.namespace, t.name, err)
		}
	}
	req.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("ContainerRecreateRequest"))
	if err := printer.PrintObj(req, r.o.Streams.Out); err != nil {
		return err
	}
	if !r.wait {
		return nil
	}
	return r.followRequest(ctx, cl, req)
}

// followRequest prints the request's progress, container by container,
// until it completes; it fails when the request did not succeed.
func (r *restart) followRequest(ctx context.Context, cl *clients, req *v1beta1.ContainerRecreateRequest) error {
	p := newProgress(r.o.Streams.Out, false, "", r.now)
	names := containerNames(req)
	p.event("pod %s: recreating %s (containerrecreaterequest %s)", req.Spec.PodName, names, req.Name)
	seen := map[string]v1beta1.ContainerRecreateRequestPhase{}
	var last *v1beta1.ContainerRecreateRequest
	fctx, cancel := r.followCtx(ctx)
	defer cancel()
	key := types.NamespacedName{Namespace: req.Namespace, Name: req.Name}
	watch := watched{list: &v1beta1.ContainerRecreateRequestList{}, opts: []client.ListOption{
		client.InNamespace(req.Namespace), client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", req.Name)},
	}}
	err := follow(fctx, cl.client, []watched{watch}, time.Second, func(ctx context.Context) (bool, error) {
		cur := &v1beta1.ContainerRecreateRequest{}
		if err := cl.client.Get(ctx, key, cur); err != nil {
			return false, fmt.Errorf("read ContainerRecreateRequest %s: %w", key, err)
		}
		last = cur
		for _, s := range cur.Status.ContainerRecreateStates {
			if seen[s.Name] != s.Phase {
				seen[s.Name] = s.Phase
				p.event("container %s: %s%s", s.Name, s.Phase, suffixed(s.Message))
			}
		}
		return cur.Status.Phase == v1beta1.PhaseCompleted, nil
	})
	if err != nil {
		if ctx.Err() == nil && fctx.Err() == nil {
			return err
		}
		state := "not started yet"
		if last != nil && last.Status.Phase != "" {
			state = string(last.Status.Phase)
		}
		fmt.Fprintf(r.o.Streams.ErrOut, "%s: containerrecreaterequest %s is still in flight (%s); it goes on in the cluster: kubectl rejuv status crr/%s -n %s\n",
			r.stopped(err), req.Name, state, req.Name, req.Namespace)
		return &FailedError{What: "stopped following " + req.Name}
	}
	took := requestTook(last)
	if last.Status.Result == v1beta1.ResultSucceeded {
		p.event("pod %s: %s recreated in %s", last.Spec.PodName, names, took)
		return nil
	}
	p.event("pod %s: recreation %s after %s%s", last.Spec.PodName, last.Status.Result, took, suffixed(last.Status.Message))
	return &FailedError{What: fmt.Sprintf("containerrecreaterequest %s ended %s", last.Name, last.Status.Result)}
}

// suffixed is ": msg", or nothing for no message.
func suffixed(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// noneInFlight refuses a restart of a pod that has a recreation in flight,
// as a policy's InFlight gate does: a command run twice in a hurry must not
// recreate the pod twice.
func noneInFlight(ctx context.Context, cl *clients, namespace, pod string) error {
	list := &v1beta1.ContainerRecreateRequestList{}
	if err := cl.client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return fmt.Errorf("list the ContainerRecreateRequests of namespace %s: %w", namespace, err)
	}
	for _, r := range list.Items {
		if r.Spec.PodName == pod && r.Status.Phase != v1beta1.PhaseCompleted && r.DeletionTimestamp == nil {
			phase := r.Status.Phase
			if phase == "" {
				phase = v1beta1.PhasePending
			}
			return fmt.Errorf("pod %s/%s has a recreation in flight (containerrecreaterequest %s, %s); follow it with kubectl rejuv status crr/%s", namespace, pod, r.Name, phase, r.Name)
		}
	}
	return nil
}
