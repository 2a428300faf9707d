package uninstall

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/pause"
)

// Options say what to prepare.
type Options struct {
	// Namespace is the manager's.
	Namespace string
	// ServiceAccount is the manager's, in Namespace: it owns the stop.
	ServiceAccount string
	// Reason is quoted in every policy's status and every refusal while
	// the uninstall runs.
	Reason string
	// Timeout bounds the whole preparation.
	Timeout time.Duration
	// Poll is the time between two reads while waiting.
	Poll time.Duration
}

// BindFlags registers the options on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "rejuv-system"
	}
	fs.StringVar(&o.Namespace, "namespace", ns, "namespace the manager runs in (default $POD_NAMESPACE or rejuv-system)")
	fs.StringVar(&o.ServiceAccount, "service-account", "rejuv-healer", "the manager's ServiceAccount in --namespace; the stop is deleted with it")
	fs.StringVar(&o.Reason, "reason", "Rejuv is being uninstalled", "why, quoted in every policy's status and every refusal while the uninstall runs")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "how long to wait for the manager to end every request and put back every pod it holds")
	o.Poll = time.Second
}

// Validate checks the options, naming each bad flag.
func (o *Options) Validate() error {
	var errs []error
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace is empty"))
	}
	if o.ServiceAccount == "" {
		errs = append(errs, errors.New("--service-account is empty"))
	}
	if o.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--timeout is %s, want more than 0", o.Timeout))
	}
	return errors.Join(errs...)
}

// Prepare pauses Rejuv for the uninstall, requests begun ended too, and
// waits until the manager confirms it, no request is under way and no pod
// is held. It fails when that is not so within the timeout, naming what
// is left: the uninstall should not go on, or those pods would stay out of
// their Services with nothing left to put them back.
func Prepare(ctx context.Context, c client.Client, o Options) error {
	logger := log.FromContext(ctx)
	sa := &corev1.ServiceAccount{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: o.Namespace, Name: o.ServiceAccount}, sa); err != nil {
		return fmt.Errorf("read the manager's ServiceAccount %s/%s, which the stop belongs to: %w", o.Namespace, o.ServiceAccount, err)
	}
	stop := pause.Stop{
		Namespace: o.Namespace, Reason: o.Reason, EndRequests: true,
		Owner: &metav1.OwnerReference{APIVersion: "v1", Kind: "ServiceAccount", Name: sa.Name, UID: sa.UID},
	}
	digest, err := pause.Write(ctx, c, stop)
	if err != nil {
		return err
	}
	logger.Info("paused every recreation for the uninstall; waiting for the manager to confirm", "configMap", stop.Key().String())

	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	// A read that fails is tried again at the next poll: the last failure
	// joins the timeout's error.
	var last error
	if err := wait.PollUntilContextCancel(ctx, o.Poll, true, func(ctx context.Context) (bool, error) {
		ok, err := pause.Observed(ctx, c, stop.Key(), digest)
		last = err
		return ok, nil
	}); err != nil {
		return fmt.Errorf("the manager did not confirm the stop within %s: is it running (kubectl get pods -n %s)? Uninstalling without it could leave the pods it holds out of their Services; fix it, or uninstall without this step (helm uninstall --no-hooks) and check the pods with the readiness gate %s: %w",
			o.Timeout, o.Namespace, v1beta1.PodReadyCondition, errors.Join(err, last))
	}
	logger.Info("the manager confirmed the stop; waiting for every request to end and every pod held to be back in its Services")
	var left pause.UnderWay
	last = nil
	if err := wait.PollUntilContextCancel(ctx, o.Poll, true, func(ctx context.Context) (bool, error) {
		u, err := pause.ReadUnderWay(ctx, c)
		if last = err; err != nil {
			return false, nil
		}
		left = u
		return left.Settled(), nil
	}); err != nil {
		return fmt.Errorf("after %s, %s: the uninstall should wait until the manager has put them back (kubectl rejuv status -A): %w", o.Timeout, left, errors.Join(err, last))
	}
	logger.Info("ready to uninstall: " + left.String())
	return nil
}
