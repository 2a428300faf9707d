package plugin

import (
	"context"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// registerCompletions completes the global flags' values that name
// cluster objects; cobra's own completion command writes the shell
// scripts (kubectl rejuv completion bash|zsh|fish|powershell).
func registerCompletions(o *Options, root *cobra.Command) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		return o.names(cmd.Context(), &corev1.NamespaceList{}, false, prefix), cobra.ShellCompDirectiveNoFileComp
	})
	_ = root.RegisterFlagCompletionFunc("context", func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		cfg, err := o.Config.ToRawKubeConfigLoader().RawConfig()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for name := range cfg.Contexts {
			if strings.HasPrefix(name, prefix) {
				out = append(out, name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// names lists the names of the objects of list (in the namespace when
// namespaced) that start with prefix, within two seconds.
func (o *Options) names(ctx context.Context, list client.ObjectList, namespaced bool, prefix string) []string {
	cl, err := o.Clients()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	var opts []client.ListOption
	if namespaced {
		opts = append(opts, client.InNamespace(cl.namespace))
	}
	if err := cl.client.List(ctx, list, opts...); err != nil {
		return nil
	}
	var out []string
	_ = apimeta.EachListItem(list, func(obj runtime.Object) error {
		if m, err := apimeta.Accessor(obj); err == nil && strings.HasPrefix(m.GetName(), prefix) {
			out = append(out, m.GetName())
		}
		return nil
	})
	return out
}

// completePods completes a pod's name.
func completePods(o *Options) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		return o.names(cmd.Context(), &corev1.PodList{}, true, prefix), cobra.ShellCompDirectiveNoFileComp
	}
}

// completeTargets completes the first argument: a pod's name, a
// workload type, or TYPE/NAME for policies.
func completeTargets(o *Options) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if strings.HasPrefix(prefix, "rp/") || strings.HasPrefix(prefix, "recreatepolicy/") {
			kind, name, _ := strings.Cut(prefix, "/")
			var out []string
			for _, n := range o.names(cmd.Context(), &v1alpha1.RecreatePolicyList{}, true, name) {
				out = append(out, kind+"/"+n)
			}
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		out := o.names(cmd.Context(), &corev1.PodList{}, true, prefix)
		for _, kind := range []string{"deployment/", "statefulset/", "daemonset/", "replicaset/", "rp/"} {
			if strings.HasPrefix(kind, prefix) {
				out = append(out, kind)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// completeContainers completes -c with the containers of the pod named
// first on the command line.
func completeContainers(o *Options) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
		if len(args) == 0 || strings.Contains(args[0], "/") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cl, err := o.Clients()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		pod := &corev1.Pod{}
		if err := cl.client.Get(cmd.Context(), client.ObjectKey{Namespace: cl.namespace, Name: args[0]}, pod); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []string
		for _, name := range policyspec.Containers(nil).Candidates(pod) {
			if strings.HasPrefix(name, prefix) {
				out = append(out, name)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeRuleNames completes a built-in rule's name.
func completeRuleNames(_ *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, name := range ruleNames() {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
