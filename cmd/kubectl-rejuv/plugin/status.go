package plugin

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// status is kubectl rejuv status: what is being recreated and why.
type status struct {
	o             *Options
	output        string
	selector      string
	allNamespaces bool
	watch         bool
	now           func() time.Time
}

func newStatusCommand(o *Options) *cobra.Command {
	s := &status{o: o, now: time.Now}
	cmd := &cobra.Command{
		Use:   "status [POD | TYPE/NAME | crr/NAME | rp/NAME]",
		Short: "Show what is being recreated and why, per container, with the policies' decisions",
		Long: `Show the ContainerRecreateRequests of a namespace (or of a pod, a workload's
pods, or a label selector's), container by container, with who asked for each
and why; the RecreatePolicies that select those pods, with their runs; and the
policies' recent decisions about them: what was recreated, and what a gate
held back and why. crr/NAME and rp/NAME show one request or policy.`,
		Example: `  kubectl rejuv status
  kubectl rejuv status deployment/web -o wide
  kubectl rejuv status rp/nightly --watch
  kubectl rejuv status -A -o yaml`,
		Args:              maxArgs(1),
		ValidArgsFunction: completeTargets(o),
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := ""
			if len(args) == 1 {
				arg = args[0]
			}
			return s.run(cmd.Context(), arg)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&s.output, "output", "o", "", "Output format: wide, json, yaml or name (the requests' and policies' names); tables when empty.")
	f.StringVarP(&s.selector, "selector", "l", "", "Show the pods of this label selector.")
	f.BoolVarP(&s.allNamespaces, "all-namespaces", "A", false, "Show every namespace.")
	f.BoolVarP(&s.watch, "watch", "w", false, "Show it again whenever it changes, until interrupted.")
	return cmd
}

func (s *status) run(ctx context.Context, arg string) error {
	switch s.output {
	case "", "wide", "json", "yaml", "name":
	default:
		return usageError("--output %q: status prints as wide, json, yaml or name, or as tables when -o is not given", s.output)
	}
	if s.allNamespaces && (arg != "" || s.selector != "") {
		return usageError("--all-namespaces shows everything; name a target in one namespace instead, with -n")
	}
	cl, err := s.o.Clients()
	if err != nil {
		return err
	}
	var t *target
	if arg != "" || s.selector != "" {
		if t, err = resolveTarget(ctx, cl, arg, s.selector, "pod", "workload", "recreatepolicy", "containerrecreaterequest"); err != nil {
			return err
		}
	}
	if !s.watch {
		report, err := gatherStatus(ctx, cl, t, s.allNamespaces)
		if err != nil {
			return err
		}
		return s.print(report)
	}
	var opts []client.ListOption
	if !s.allNamespaces {
		opts = append(opts, client.InNamespace(cl.namespace))
	}
	lists := []watched{
		{list: &v1beta1.ContainerRecreateRequestList{}, opts: opts},
		{list: &v1alpha1.RecreatePolicyList{}, opts: opts},
	}
	if t != nil && t.request != nil {
		lists[0].opts = append(lists[0].opts, client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", t.name)})
	}
	var last string
	err = follow(ctx, cl.client, lists, 5*time.Second, func(ctx context.Context) (bool, error) {
		report, err := gatherStatus(ctx, cl, t, s.allNamespaces)
		if err != nil {
			return false, err
		}
		text, err := s.text(report)
		if err != nil {
			return false, err
		}
		if text != last {
			last = text
			if s.o.Terminal {
				// Clear the screen and redraw.
				fmt.Fprint(s.o.Streams.Out, "\033[H\033[2J")
			} else {
				fmt.Fprintf(s.o.Streams.Out, "--- %s\n", s.now().UTC().Format(time.RFC3339))
			}
			fmt.Fprint(s.o.Streams.Out, text)
		}
		return false, nil
	})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (s *status) print(r *statusReport) error {
	text, err := s.text(r)
	if err != nil {
		return err
	}
	_, err = fmt.Fprint(s.o.Streams.Out, text)
	return err
}

// text renders the report in the output format.
func (s *status) text(r *statusReport) (string, error) {
	var b strings.Builder
	switch s.output {
	case "json", "yaml":
		err := printData(&b, r, s.output)
		return b.String(), err
	case "name":
		// As kubectl get -o name: the requests, then the policies.
		for _, q := range r.Requests {
			fmt.Fprintf(&b, "containerrecreaterequest.apps.kruise.io/%s\n", q.Name)
		}
		for _, p := range r.Policies {
			fmt.Fprintf(&b, "recreatepolicy.rejuv.dev/%s\n", p.Name)
		}
		return b.String(), nil
	}
	err := statusText{w: &b, now: s.now(), wide: s.output == "wide", allNamespaces: s.allNamespaces}.render(r)
	return b.String(), err
}
