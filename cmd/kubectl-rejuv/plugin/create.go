package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func newCreateCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a resource: a ContainerRecreateRequest, as kubectl kruise create does",
	}
	cmd.AddCommand(newCreateRequestCommand(o))
	return cmd
}

// createRequest is kubectl rejuv create crr, which takes kubectl-kruise's
// flags.
type createRequest struct {
	o          *Options
	print      *genericclioptions.PrintFlags
	pod        string
	containers []string
	terms      requestTerms
	reason     string
	dryRun     string
	validate   string
	manager    string
	saveConfig bool
}

func newCreateRequestCommand(o *Options) *cobra.Command {
	c := &createRequest{o: o, terms: defaultTerms()}
	c.print = genericclioptions.NewPrintFlags("created")
	cmd := &cobra.Command{
		Use:     "crr NAME --pod=POD [--containers=NAME,...]",
		Aliases: []string{"containerrecreaterequest", "ContainerRecreateRequest", "containerrecreaterequests"},
		Short:   "Create a ContainerRecreateRequest with the given name",
		Long: `Create a ContainerRecreateRequest that recreates containers of a pod in
place, with kubectl-kruise's flags and defaults:

  strategy:
    failurePolicy: Fail
    orderedRecreate: false
    unreadyGracePeriodSeconds: 3
  activeDeadlineSeconds: 300
  ttlSecondsAfterFinished: 1800

Without --containers every container of the pod that the kubelet starts again
once stopped is recreated: native sidecars, and regular containers unless the
pod's restartPolicy, or the container's own restartPolicy or
restartPolicyRules, would leave one stopped. Naming such a container is an
error. To follow a recreation to its end, use kubectl rejuv restart POD --wait.`,
		Example: `  # Recreate every container of pod-1
  kubectl rejuv create crr my-crr --namespace=ns --pod=pod-1

  # Recreate container-1 of pod-1
  kubectl rejuv create crr my-crr --namespace=ns --pod=pod-1 --containers=container-1

  # Keep the pod unready for 5 seconds first, give the container 30 seconds to stop
  kubectl rejuv create crr my-crr -n ns --pod=pod-1 --containers=container-1 --unreadyGracePeriodSeconds=5 --terminationGracePeriodSeconds=30`,
		Args: exactArgs(1, "name the request: kubectl rejuv create crr NAME --pod=POD"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return c.run(cmd.Context(), args[0])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&c.pod, "pod", "p", "", "The pod whose containers are recreated (required).")
	f.StringSliceVar(&c.containers, "containers", nil, "The containers to recreate; every container the kubelet restarts when empty.")
	f.Int64VarP(&c.terms.UnreadyGraceSeconds, "unreadyGracePeriodSeconds", "u", c.terms.UnreadyGraceSeconds, "Seconds the pod is kept not ready before its containers are stopped (needs the KruisePodReady readiness gate).")
	f.Int64Var(&c.terms.TerminationGraceSeconds, "terminationGracePeriodSeconds", c.terms.TerminationGraceSeconds, "Seconds a container may take to exit after SIGTERM; the pod's terminationGracePeriodSeconds when -1.")
	f.Int32VarP(&c.terms.MinStartedSeconds, "minStartedSeconds", "m", c.terms.MinStartedSeconds, "Seconds a new container must run (and be ready) before it counts as Succeeded.")
	f.StringVar(&c.terms.FailurePolicy, "failurePolicy", c.terms.FailurePolicy, "Fail ends the request at the first container that fails; Ignore goes on with the others.")
	f.BoolVar(&c.terms.Ordered, "orderedRecreate", c.terms.Ordered, "Recreate the containers one after the other, each once the previous one runs again.")
	f.BoolVar(&c.terms.Force, "forceRecreate", c.terms.Force, "Stop a container even while it is still starting.")
	f.Int64Var(&c.terms.ActiveDeadlineSeconds, "activeDeadlineSeconds", c.terms.ActiveDeadlineSeconds, "Seconds after its creation at which an unfinished request fails.")
	f.Int32Var(&c.terms.TTLSecondsAfterFinished, "ttlSecondsAfterFinished", c.terms.TTLSecondsAfterFinished, "Seconds a completed request is kept before it is deleted.")
	f.StringVar(&c.reason, "reason", "created with kubectl rejuv create crr", "Why the containers are recreated, kept in the request's rejuv.dev/reason annotation.")
	addDryRunFlag(cmd, &c.dryRun)
	f.StringVar(&c.validate, "validate", "strict", `Must be one of: strict (or true), warn, ignore (or false): how the API server treats unknown or duplicate fields.`)
	f.StringVar(&c.manager, "field-manager", "kubectl-rejuv", "Name of the manager used to track field ownership.")
	f.BoolVar(&c.saveConfig, "save-config", false, "Save the object in its kubectl.kubernetes.io/last-applied-configuration annotation, for a later kubectl apply.")
	c.print.AddFlags(cmd)
	_ = cmd.MarkFlagRequired("pod")
	_ = cmd.RegisterFlagCompletionFunc("pod", completePods(o))
	return cmd
}

func (c *createRequest) run(ctx context.Context, name string) error {
	dry, err := parseDryRun(c.dryRun)
	if err != nil {
		return err
	}
	validation, err := fieldValidation(c.validate)
	if err != nil {
		return err
	}
	if err := c.terms.check(func(n string) string { return "--" + n }); err != nil {
		return err
	}
	if err := c.print.Complete("%s" + dry.suffix()); err != nil {
		return err
	}
	printer, err := c.print.ToPrinter()
	if err != nil {
		return usageError("%v", err)
	}
	cl, err := c.o.Clients()
	if err != nil {
		return err
	}
	pod := &corev1.Pod{}
	if err := cl.client.Get(ctx, types.NamespacedName{Namespace: cl.namespace, Name: c.pod}, pod); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("no pod %s in namespace %s (kubectl get pods -n %s lists them)", c.pod, cl.namespace, cl.namespace)
		}
		return fmt.Errorf("read pod %s/%s: %w", cl.namespace, c.pod, err)
	}
	containers, err := podContainers(pod, trimAll(c.containers))
	if err != nil {
		return err
	}
	warnLeftAlone(c.o.Streams.ErrOut, pod, trimAll(c.containers))
	req := c.terms.request(pod, name, containers, c.reason)
	if c.saveConfig {
		if err := saveConfig(req); err != nil {
			return err
		}
	}
	if dry != dryRunClient {
		if err := cl.client.Create(ctx, req, dry.createOptions(c.manager, validation)...); err != nil {
			return fmt.Errorf("create ContainerRecreateRequest %s/%s for pod %s: %w", cl.namespace, name, pod.Name, err)
		}
	}
	req.SetGroupVersionKind(v1beta1.GroupVersion.WithKind("ContainerRecreateRequest"))
	return printer.PrintObj(req, c.o.Streams.Out)
}

// saveConfig records obj in its last-applied-configuration annotation, as
// kubectl create --save-config does.
func saveConfig(r *v1beta1.ContainerRecreateRequest) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode the request for --save-config: %w", err)
	}
	r.Annotations[lastAppliedAnnotation] = string(b)
	return nil
}

const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// fieldValidation reads --validate as kubectl does.
func fieldValidation(v string) (string, error) {
	switch strings.ToLower(v) {
	case "strict", "true", "":
		return "Strict", nil
	case "warn":
		return "Warn", nil
	case "ignore", "false":
		return "Ignore", nil
	}
	return "", usageError("--validate %q: must be one of strict (or true), warn, ignore (or false)", v)
}

func trimAll(list []string) []string {
	var out []string
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// maxArgs is cobra.MaximumNArgs, its error a usage error.
func maxArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.MaximumNArgs(n)(cmd, args); err != nil {
			return &UsageError{msg: err.Error()}
		}
		return nil
	}
}

// exactArgs is cobra.ExactArgs with a message that says what to give.
func exactArgs(n int, hint string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("%s", hint)
		}
		return nil
	}
}
