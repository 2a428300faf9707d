package plugin

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/pause"
)

// defaultRejuvNamespace is where the install files and the chart's
// defaults put the manager.
const defaultRejuvNamespace = "rejuv-system"

// pauseAll is kubectl rejuv pause --all and resume --all: Rejuv's
// emergency stop, the ConfigMap v1alpha1.PauseConfigMap in the manager's
// namespace.
type pauseAll struct {
	o              *Options
	all            bool
	reason         string
	endRequests    bool
	rejuvNamespace string
	timeout        time.Duration
	// poll is the time between two reads while waiting.
	poll time.Duration
}

func (p *pauseAll) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&p.all, "all", false, "Every recreation of the cluster (required: the emergency stop is cluster-wide; one policy stops with its spec.suspend).")
	f.StringVar(&p.rejuvNamespace, "rejuv-namespace", defaultRejuvNamespace, "The namespace Rejuv's manager runs in.")
}

func newPauseCommand(o *Options) *cobra.Command {
	p := &pauseAll{o: o, poll: 500 * time.Millisecond}
	cmd := &cobra.Command{
		Use:   "pause --all",
		Short: "Stop every recreation cluster-wide at once: the emergency stop",
		Long: `Pause Rejuv cluster-wide: no policy creates a request (each one's decisions
say Paused and its Ready condition says why), no new ContainerRecreateRequest
is admitted, and every request no daemon has begun is ended. Requests a
daemon has begun finish, or are ended too with --end-requests; either way
the pods they held out of their Services are put back. The command writes
the ConfigMap rejuv-pause in Rejuv's namespace, waits until the manager
confirms it acts on it, then for the requests still under way to end and
every pod with the readiness gate to be back in its Services; past
--timeout it fails, naming what is left (the pause holds all the same). kubectl rejuv resume --all undoes it; before an uninstall,
pause with --end-requests first.`,
		Example: `  kubectl rejuv pause --all --reason "INC-42: restarts under investigation"
  kubectl rejuv pause --all --end-requests
  kubectl rejuv resume --all`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !p.all {
				return usageError("pause needs --all: it stops every recreation of the cluster (to stop one policy, set its spec.suspend)")
			}
			if len(p.reason) > v1alpha1.MaxPauseReasonBytes {
				return usageError("--reason is %d bytes, over its bound of %d", len(p.reason), v1alpha1.MaxPauseReasonBytes)
			}
			c, err := o.Clients()
			if err != nil {
				return err
			}
			return p.pause(cmd.Context(), c)
		},
	}
	p.flags(cmd)
	cmd.Flags().DurationVar(&p.timeout, "timeout", 30*time.Second, "How long to wait for the manager to confirm, and for the requests a daemon has begun to end and the pods they held to be back.")
	cmd.Flags().StringVar(&p.reason, "reason", "", fmt.Sprintf("Why, quoted in every policy's status and every refusal (at most %d bytes).", v1alpha1.MaxPauseReasonBytes))
	cmd.Flags().BoolVar(&p.endRequests, "end-requests", false, "End the requests a daemon has begun too, rather than let them finish.")
	return cmd
}

func newResumeCommand(o *Options) *cobra.Command {
	p := &pauseAll{o: o, poll: 500 * time.Millisecond}
	cmd := &cobra.Command{
		Use:   "resume --all",
		Short: "Undo kubectl rejuv pause --all: policies act and requests are admitted again",
		Long: `Resume Rejuv after kubectl rejuv pause --all: the command deletes the
ConfigMap rejuv-pause in Rejuv's namespace. Policies act again at their next
pass (a rolling run held by the pause goes on; a scheduled run due meanwhile
was skipped, as when a policy is suspended), and requests are admitted again.`,
		Example: `  kubectl rejuv resume --all`,
		Args:    maxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !p.all {
				return usageError("resume needs --all: the emergency stop it undoes is cluster-wide")
			}
			c, err := o.Clients()
			if err != nil {
				return err
			}
			return p.resume(cmd.Context(), c)
		},
	}
	p.flags(cmd)
	return cmd
}

// stop is the emergency stop as the command writes it.
func (p *pauseAll) stop() pause.Stop {
	return pause.Stop{Namespace: p.rejuvNamespace, Reason: p.reason, EndRequests: p.endRequests}
}

// pause writes the stop, waits for the manager to confirm it, then for
// the requests under way to end and the pods they held to be back in
// their Services, and says what is left.
func (p *pauseAll) pause(ctx context.Context, c *clients) error {
	stop := p.stop()
	digest, err := pause.Write(ctx, c.client, stop)
	if err != nil {
		return fmt.Errorf("pause Rejuv: %w (--rejuv-namespace names the namespace Rejuv's manager runs in)", err)
	}
	out := p.o.Streams.Out
	fmt.Fprintf(out, "configmap/%s written in namespace %s: new requests are refused\n", v1alpha1.PauseConfigMap, p.rejuvNamespace)

	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	if err := wait.PollUntilContextCancel(ctx, p.poll, true, func(ctx context.Context) (bool, error) {
		return pause.Observed(ctx, c.client, stop.Key(), digest)
	}); err != nil {
		return fmt.Errorf("pause Rejuv: configmap/%s is written, but the manager did not confirm within %s that it acts on it: is it running? (kubectl get pods -n %s): %w",
			v1alpha1.PauseConfigMap, p.timeout, p.rejuvNamespace, err)
	}
	fmt.Fprintln(out, "the manager confirmed: no policy creates a request, and the requests no daemon had begun are ended")

	var left pause.UnderWay
	err = wait.PollUntilContextCancel(ctx, p.poll, true, func(ctx context.Context) (bool, error) {
		var err error
		left, err = pause.ReadUnderWay(ctx, c.client)
		return left.Settled(), err
	})
	switch {
	case err == nil:
		fmt.Fprintln(out, "no request is under way and no pod is held: Rejuv is paused cluster-wide; kubectl rejuv resume --all resumes")
	case ctx.Err() != nil:
		return fmt.Errorf("pause Rejuv: paused, nothing new starts (kubectl rejuv resume --all resumes), but after --timeout %s, %s: kubectl rejuv status -A shows them; run pause again to wait longer", p.timeout, left)
	default:
		return fmt.Errorf("pause Rejuv: paused, but reading what is under way failed: %w", err)
	}
	return nil
}

// resume deletes the stop.
func (p *pauseAll) resume(ctx context.Context, c *clients) error {
	stop := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: p.rejuvNamespace, Name: v1alpha1.PauseConfigMap}}
	err := c.client.Delete(ctx, stop)
	switch {
	case apierrors.IsNotFound(err):
		fmt.Fprintf(p.o.Streams.Out, "Rejuv was not paused: no configmap/%s in namespace %s\n", v1alpha1.PauseConfigMap, p.rejuvNamespace)
		return nil
	case err != nil:
		return fmt.Errorf("resume Rejuv: delete ConfigMap %s: %w", client.ObjectKeyFromObject(stop), err)
	}
	fmt.Fprintf(p.o.Streams.Out, "configmap/%s deleted: Rejuv resumed; policies act again at their next pass\n", v1alpha1.PauseConfigMap)
	return nil
}
