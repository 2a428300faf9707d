package plugin

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// restart is kubectl rejuv restart: one pod through a request, or a
// workload's pods through a restart policy that the manager rolls out.
type restart struct {
	o              *Options
	print          *genericclioptions.PrintFlags
	containers     []string
	selector       string
	maxUnavailable string
	wait           bool
	timeout        time.Duration
	reason         string
	deadline       time.Duration
	force          bool
	unreadyGrace   time.Duration
	graceSet       bool
	dryRun         string
	manager        string
	now            func() time.Time
}

func newRestartCommand(o *Options) *cobra.Command {
	r := &restart{o: o, print: genericclioptions.NewPrintFlags("created"), now: time.Now}
	cmd := &cobra.Command{
		Use:   "restart (POD | TYPE/NAME | -l SELECTOR) [-c CONTAINER]...",
		Short: "Restart the containers of a pod, or of a workload's pods in rolling batches, in place",
		Long: `Restart containers in place: they are stopped and the kubelet starts them
again in the same pod, on the same node, with the same IP and volumes.

A pod is restarted through a ContainerRecreateRequest. A workload (deployment,
statefulset, daemonset, replicaset) or the pods of a label selector are
restarted by the Rejuv manager in rolling batches: the command writes a
RecreatePolicy named restart-KIND-NAME whose spec.restartAt asks for one
rolling restart now, at most --max-unavailable pods at a time (the workload's
own maxUnavailable by default), holding back while a PodDisruptionBudget
allows no disruption, and halting at the first failure. The rollout lives in
the cluster: it goes on, within its limits, when this command stops or the
laptop closes. rp/NAME restarts the selected pods of an existing policy the
same way.

Before its containers stop, each pod is taken out of its Services for
--unready-grace (5s by default) through the KruisePodReady readiness gate, so
that no new request reaches it; the command warns of pods without the gate
(a pod gets it when created while a RecreatePolicy selects it).

With --wait the command follows the restart to its end, with a line per
event (and a progress bar on a terminal), prints a summary, and exits
non-zero when anything failed. Ctrl-C stops following, not the restart.`,
		Example: `  # Restart every container of pod web-0 and wait for it
  kubectl rejuv restart web-0 --wait

  # Restart only the proxy sidecar
  kubectl rejuv restart web-0 -c proxy

  # Restart a deployment's pods in place, two at a time, and follow it
  kubectl rejuv restart deployment/web --max-unavailable 2 --wait

  # Restart the pods labelled app=cache, showing what would be done
  kubectl rejuv restart -l app=cache --dry-run=client`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := ""
			if len(args) == 1 {
				arg = args[0]
			}
			r.graceSet = cmd.Flags().Changed("unready-grace")
			return r.run(cmd.Context(), arg, cmd.Flags().Changed("timeout"))
		},
		ValidArgsFunction: completeTargets(o),
	}
	f := cmd.Flags()
	f.StringArrayVarP(&r.containers, "container", "c", nil, "A container to restart (repeat for more); every container the kubelet restarts when none is named. For a workload, * and ? match several.")
	f.StringVarP(&r.selector, "selector", "l", "", "Restart the pods of this label selector, in rolling batches.")
	f.StringVar(&r.maxUnavailable, "max-unavailable", "", "Most pods of a workload restarting (or not ready) at once: a number or a percentage; the workload's own maxUnavailable when empty.")
	f.BoolVar(&r.wait, "wait", false, "Follow the restart to its end, and exit non-zero if anything failed.")
	f.DurationVar(&r.timeout, "timeout", 0, "With --wait, how long to follow before giving up (the restart goes on); 0 for no limit. Implies --wait.")
	f.StringVar(&r.reason, "reason", "", "Why, kept with the request or policy and shown by kubectl rejuv status.")
	f.DurationVar(&r.deadline, "deadline", 5*time.Minute, "How long each pod's recreation may take before it counts as failed (the request's activeDeadlineSeconds).")
	f.BoolVar(&r.force, "force", false, "Stop a container even while it is still starting (a pod's restart only).")
	f.DurationVar(&r.unreadyGrace, "unready-grace", time.Duration(policyspec.DefaultUnreadyGraceSeconds)*time.Second, "How long each pod is taken out of its Services (made not ready through its readiness gate) before its containers are stopped, so that no new request reaches them; whole seconds, 0 to stop them at once.")
	addDryRunFlag(cmd, &r.dryRun)
	f.StringVar(&r.manager, "field-manager", "kubectl-rejuv", "Name of the manager used to track field ownership.")
	r.print.AddFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("container", completeContainers(o))
	return cmd
}

func (r *restart) run(ctx context.Context, arg string, timeoutSet bool) error {
	dry, err := parseDryRun(r.dryRun)
	if err != nil {
		return err
	}
	if arg == "" && r.selector == "" {
		return usageError("name what to restart: a pod, TYPE/NAME (deployment/web) or -l SELECTOR")
	}
	if r.deadline < v1beta1.MinActiveDeadlineSeconds*time.Second {
		return usageError("--deadline %s: must be at least %ds", r.deadline, v1beta1.MinActiveDeadlineSeconds)
	}
	if r.timeout < 0 {
		return usageError("--timeout %s: must not be negative", r.timeout)
	}
	if r.unreadyGrace < 0 || r.unreadyGrace%time.Second != 0 {
		return usageError("--unready-grace %s: must be whole seconds, not negative", r.unreadyGrace)
	}
	r.wait = r.wait || timeoutSet
	if r.wait && dry != dryRunNone {
		return usageError("--wait follows a restart, which a dry run does not start")
	}
	if err := r.print.Complete("%s" + dry.suffix()); err != nil {
		return err
	}
	printer, err := r.print.ToPrinter()
	if err != nil {
		return usageError("%v", err)
	}
	cl, err := r.o.Clients()
	if err != nil {
		return err
	}
	t, err := resolveTarget(ctx, cl, arg, r.selector, "pod", "workload", "recreatepolicy")
	if err != nil {
		return err
	}
	if t.pod != nil {
		return r.restartPod(ctx, cl, t, dry, printer)
	}
	return r.rollOut(ctx, cl, t, dry)
}

// followCtx bounds following by --timeout; the returned error says what
// ended it when it was not the follower itself.
func (r *restart) followCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.timeout > 0 {
		return context.WithTimeout(ctx, r.timeout)
	}
	return context.WithCancel(ctx)
}

// stopped says why following stopped early: the timeout, or an
// interrupt.
func (r *restart) stopped(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("timed out after %s", r.timeout)
	}
	return "interrupted"
}
