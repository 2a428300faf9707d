package plugin

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	promapi "github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/backtest"
	"github.com/rejuv-dev/rejuv/healer/workingset"
	"github.com/rejuv-dev/rejuv/rules"
)

// policyBacktest is kubectl rejuv policy backtest.
type policyBacktest struct {
	o              *Options
	files          []string
	since          string
	until          string
	prometheus     string
	rejuvNamespace string
	sets           []string
	output         string
	// interval and window are the sampler's; zero for the manager's.
	interval, window time.Duration
	now              func() time.Time
}

// maxBacktestSpan bounds --since: history a backtest reads at most.
const maxBacktestSpan = 31 * 24 * time.Hour

// healerDeployment is the manager's Deployment in Rejuv's namespace, whose
// --prometheus-url a backtest reads by default.
const healerDeployment = "rejuv-healer"

func newPolicyBacktestCommand(o *Options) *cobra.Command {
	bt := &policyBacktest{o: o, now: time.Now}
	cmd := &cobra.Command{
		Use:   "backtest -f POLICY.yaml [--since 7d] [--prometheus URL] [--set PARAM=VALUE]...",
		Short: "Replay a policy's rules over the history Prometheus holds, and show what they would have recreated",
		Long: `Replay RecreatePolicies over the last days of the pods they select, as the
manager would have run them: the working set read from Prometheus with the
manager's queries and sampled into the manager's windows, the rules evaluated
by the manager's engine at every pass, the gates (cooldown, memoryRecurrence,
maxPerHour, blast radius, maxUnavailable) applied to what they match, and
each recreation simulated (the container gets a new ID and its window starts
again; its memory is the recorded one). Beside them, the kernel's OOM kills of
the same containers: caught (a recreation came before, with the lead time),
missed, and recreations no kill followed (unneeded: at most this many false
positives).

The pods are those running now that the selector chooses, and past pods whose
labels kube-state-metrics recorded (kube_pod_labels, with the labels its
--metric-labels-allowlist lets through); pods history has without such labels
are counted as unmatched. Instances, limits and the working set come from the
kubelets' cAdvisor series; OOM kills from kube-state-metrics' restart counter
and last terminated reason, readiness from its kube_pod_container_status_ready.
Rules that read what history does not hold (readiness without
kube-state-metrics, startup probes, spec.signals) are evaluated but named as
not replayed.

Prometheus is the manager's (its --prometheus-url, reached through the API
server's service proxy) unless --prometheus names one. Each --set replays the
policies again with parameters of their built-in rules changed (PARAM=VALUE
for every rule that has it, RULE.PARAM=VALUE for one; several separated by
commas), and the summaries are compared side by side.`,
		Example: `  # What would the policy have done over the last week?
  kubectl rejuv policy backtest -f policy.yaml --since 7d

  # Tune memory-leak: the policy as written against two thresholds
  kubectl rejuv policy backtest -f policy.yaml --set minGrowthPerHour=40Mi --set minGrowthPerHour=80Mi,minFit=0.9

  # Against a Prometheus reachable from here, as JSON
  kubectl rejuv policy backtest -f policy.yaml --prometheus http://localhost:9090 -o json`,
		Args: maxArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return bt.run(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringArrayVarP(&bt.files, "filename", "f", nil, "A file or directory of RecreatePolicies (- for standard input); repeat for more.")
	f.StringVar(&bt.since, "since", "7d", "How far back to replay: a duration such as 7d, 36h or 90m (at most 31d).")
	f.StringVar(&bt.until, "until", "", "The end of the replayed period (RFC 3339); now when empty.")
	f.StringVar(&bt.prometheus, "prometheus", "", "The Prometheus to read history from, such as http://localhost:9090; the manager's --prometheus-url when empty.")
	f.StringVar(&bt.rejuvNamespace, "rejuv-namespace", defaultRejuvNamespace, "The namespace Rejuv's manager runs in.")
	f.StringArrayVar(&bt.sets, "set", nil, "Replay again with built-in rules' parameters changed: PARAM=VALUE or RULE.PARAM=VALUE, several separated by commas; repeat to compare more.")
	f.StringVarP(&bt.output, "output", "o", "", "Output format: json or yaml; tables when empty.")
	f.DurationVar(&bt.interval, "memory-sample-interval", 0, "Time between working set samples; the manager's --memory-sample-interval when 0 (30s if it has none).")
	f.DurationVar(&bt.window, "memory-window", 0, "How far back each container's window reaches; the manager's --memory-window when 0 (1h if it has none). A memory-leak minObservation beyond it is never met.")
	_ = cmd.MarkFlagRequired("filename")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

// backtestResults are what policy backtest prints with -o json or yaml.
type backtestResults struct {
	Reports []*backtest.Report `json:"reports"`
}

func (bt *policyBacktest) run(ctx context.Context) error {
	switch bt.output {
	case "", "json", "yaml":
	default:
		return usageError("--output %q: policy backtest prints as json or yaml, or as tables when -o is not given", bt.output)
	}
	span, err := parseSpan(bt.since)
	if err != nil {
		return usageError("--since %q: %v", bt.since, err)
	}
	to := bt.now()
	if bt.until != "" {
		if to, err = time.Parse(time.RFC3339, bt.until); err != nil {
			return usageError("--until %q: not an RFC 3339 time such as 2026-11-24T03:00:00Z", bt.until)
		}
	}
	if bt.interval < 0 || bt.window < 0 || (bt.interval > 0 && bt.interval < time.Second) {
		return usageError("--memory-sample-interval %s, --memory-window %s: the interval at least 1s, neither negative", bt.interval, bt.window)
	}
	var in objects
	for _, f := range bt.files {
		if err := readObjects(f, bt.o.Streams.In, &in); err != nil {
			return fmt.Errorf("-f: %w", err)
		}
	}
	if len(in.policies) == 0 {
		return usageError("-f names no RecreatePolicy")
	}
	variants := []variant{{}}
	for _, s := range bt.sets {
		v, err := parseVariant(s)
		if err != nil {
			return usageError("--set %q: %v", s, err)
		}
		variants = append(variants, v)
	}
	// Every policy in every variant, checked before anything is read.
	varied := make([][]*v1alpha1.RecreatePolicy, len(in.policies))
	for i := range in.policies {
		for _, v := range variants {
			vp, err := v.apply(&in.policies[i])
			if err != nil {
				return usageError("--set %s: %v", v.name, err)
			}
			varied[i] = append(varied[i], vp)
		}
	}
	cl, err := bt.o.Clients()
	if err != nil {
		return err
	}
	manager := bt.managerArgs(ctx, cl)
	api, err := bt.prometheusAPI(manager)
	if err != nil {
		return err
	}
	opt, err := bt.sampling(manager)
	if err != nil {
		return err
	}
	out := &backtestResults{}
	live := map[string][]corev1.Pod{}
	for i := range in.policies {
		p := &in.policies[i]
		if p.Namespace == "" {
			p.Namespace = cl.namespace
		}
		if _, ok := live[p.Namespace]; !ok {
			pods := &corev1.PodList{}
			if err := cl.client.List(ctx, pods, client.InNamespace(p.Namespace)); err != nil {
				return fmt.Errorf("list the pods of namespace %s: %w", p.Namespace, err)
			}
			live[p.Namespace] = pods.Items
		}
		for j, v := range variants {
			vp := varied[i][j]
			vp.Namespace = p.Namespace
			src := &backtest.Prometheus{API: api, Live: live[p.Namespace]}
			opt.Variant = v.name
			report, err := backtest.Run(ctx, vp, src, to.Add(-span), to, opt)
			if err != nil {
				return err
			}
			out.Reports = append(out.Reports, report)
		}
	}
	if bt.output != "" {
		return printData(bt.o.Streams.Out, out, bt.output)
	}
	return backtestText{w: bt.o.Streams.Out}.render(out.Reports)
}

// parseSpan reads a duration that may count days (7d, 1d12h).
func parseSpan(s string) (time.Duration, error) {
	days := time.Duration(0)
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil {
			return 0, fmt.Errorf("not a duration such as 7d, 36h or 90m")
		}
		days, s = time.Duration(n)*24*time.Hour, s[i+1:]
	}
	rest := time.Duration(0)
	if s != "" {
		var err error
		if rest, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("not a duration such as 7d, 36h or 90m")
		}
	}
	d := days + rest
	switch {
	case d <= 0:
		return 0, fmt.Errorf("must be positive")
	case d > maxBacktestSpan:
		return 0, fmt.Errorf("at most 31d: a longer replay reads more history than one run should")
	}
	return d, nil
}

// variant is one --set: parameters to change, by rule ("" for every
// rule that has the parameter).
type variant struct {
	name string
	sets []parameterSet
}

type parameterSet struct {
	rule, param, value string
}

func parseVariant(s string) (variant, error) {
	v := variant{name: s}
	for part := range strings.SplitSeq(s, ",") {
		key, value, ok := strings.Cut(part, "=")
		if !ok || key == "" || value == "" {
			return v, fmt.Errorf("%q is not PARAM=VALUE or RULE.PARAM=VALUE", part)
		}
		set := parameterSet{param: key, value: value}
		if rule, param, ok := strings.Cut(key, "."); ok {
			set.rule, set.param = rule, param
		}
		v.sets = append(v.sets, set)
	}
	return v, nil
}

// apply is p with the variant's parameters set on its built-in rules; an
// error names a parameter no rule of p has.
func (v variant) apply(p *v1alpha1.RecreatePolicy) (*v1alpha1.RecreatePolicy, error) {
	p = p.DeepCopy()
	for _, set := range v.sets {
		found := false
		for i := range p.Spec.Rules {
			r := &p.Spec.Rules[i]
			b, ok := rules.Lookup(r.Builtin)
			if !ok || (set.rule != "" && set.rule != r.Name) || !slices.ContainsFunc(b.Parameters, func(bp rules.Parameter) bool { return bp.Name == set.param }) {
				continue
			}
			if r.Parameters == nil {
				r.Parameters = map[string]apiextensionsv1.JSON{}
			}
			r.Parameters[set.param] = apiextensionsv1.JSON{Raw: parameterJSON(set.value)}
			found = true
		}
		if !found {
			return nil, fmt.Errorf("no built-in rule of RecreatePolicy %s has the parameter %s", p.Name, set.param)
		}
	}
	return p, nil
}

// parameterJSON is a parameter's value as JSON: a number as given, any
// other value (a duration, a quantity) as a string.
func parameterJSON(value string) []byte {
	if json.Valid([]byte(value)) {
		var n json.Number
		if err := json.Unmarshal([]byte(value), &n); err == nil {
			return []byte(value)
		}
	}
	raw, _ := json.Marshal(value)
	return raw
}

// managerArgs are the arguments of the manager's container in its
// Deployment, or why they could not be read.
type managerArgs struct {
	args []string
	err  error
}

// value is the value of flag, "" when it is not given.
func (m managerArgs) value(flag string) string {
	for i, a := range m.args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v
		}
		if a == flag && i+1 < len(m.args) {
			return m.args[i+1]
		}
	}
	return ""
}

// managerArgs reads the manager's arguments from Deployment rejuv-healer
// in --rejuv-namespace.
func (bt *policyBacktest) managerArgs(ctx context.Context, cl *clients) managerArgs {
	dep := &appsv1.Deployment{}
	if err := cl.client.Get(ctx, client.ObjectKey{Namespace: bt.rejuvNamespace, Name: healerDeployment}, dep); err != nil {
		return managerArgs{err: fmt.Errorf("read Deployment %s/%s: %w", bt.rejuvNamespace, healerDeployment, err)}
	}
	var args []string
	for _, c := range dep.Spec.Template.Spec.Containers {
		args = append(append(args, c.Command...), c.Args...)
	}
	return managerArgs{args: args}
}

// sampling is the sampler's interval and window: the flags', else the
// manager's, else the defaults; checked as the manager checks its own.
func (bt *policyBacktest) sampling(manager managerArgs) (backtest.Options, error) {
	opt := backtest.Options{Interval: bt.interval, Window: bt.window}
	for _, f := range []struct {
		flag string
		into *time.Duration
	}{{"--memory-sample-interval", &opt.Interval}, {"--memory-window", &opt.Window}} {
		if *f.into > 0 {
			continue
		}
		if v := manager.value(f.flag); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return opt, fmt.Errorf("the manager's %s %q: %w", f.flag, v, err)
			}
			*f.into = d
		}
	}
	opt.Interval = cmp.Or(opt.Interval, workingset.DefaultInterval)
	opt.Window = cmp.Or(opt.Window, workingset.DefaultWindow)
	switch {
	case opt.Window < 2*opt.Interval:
		return opt, usageError("--memory-window %s is shorter than two samples (--memory-sample-interval %s)", opt.Window, opt.Interval)
	case opt.Window/opt.Interval > maxWindowSlots:
		return opt, usageError("--memory-window %s holds more than %d samples of %s", opt.Window, maxWindowSlots, opt.Interval)
	}
	return opt, nil
}

// maxWindowSlots bounds a window's samples, as the manager bounds its own.
const maxWindowSlots = 100_000

// prometheusAPI is the Prometheus of --prometheus, or else the manager's
// --prometheus-url reached through the API server's service proxy.
func (bt *policyBacktest) prometheusAPI(manager managerArgs) (promv1.API, error) {
	if bt.prometheus != "" {
		u, err := url.Parse(bt.prometheus)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usageError("--prometheus %q: not an http:// or https:// URL with a host", bt.prometheus)
		}
		c, err := promapi.NewClient(promapi.Config{Address: bt.prometheus})
		if err != nil {
			return nil, fmt.Errorf("--prometheus %s: %w", bt.prometheus, err)
		}
		return promv1.NewAPI(c), nil
	}
	if manager.err != nil {
		return nil, fmt.Errorf("the manager's --prometheus-url (or give --prometheus): %w", manager.err)
	}
	address := manager.value("--prometheus-url")
	if address == "" {
		return nil, usageError("the manager (Deployment %s/%s) has no --prometheus-url: give --prometheus", bt.rejuvNamespace, healerDeployment)
	}
	cfg, err := bt.o.Config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("read the kubeconfig: %w", err)
	}
	proxy, err := serviceProxy(cfg.Host, address, bt.rejuvNamespace)
	if err != nil {
		return nil, fmt.Errorf("the manager's --prometheus-url %s: %w (give --prometheus)", address, err)
	}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	c, err := promapi.NewClient(promapi.Config{Address: proxy, RoundTripper: transport})
	if err != nil {
		return nil, fmt.Errorf("the manager's Prometheus through %s: %w", proxy, err)
	}
	return promv1.NewAPI(c), nil
}

// serviceProxy is the API server's proxy to the in-cluster Service an
// address names (http://NAME[.NAMESPACE[.svc...]]:PORT/PATH); a Service
// without a namespace is in namespace.
func serviceProxy(apiserver, address, namespace string) (string, error) {
	u, err := url.Parse(address)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("not a URL with a host")
	}
	labels := strings.Split(u.Hostname(), ".")
	name := labels[0]
	if len(labels) > 1 {
		namespace = labels[1]
	}
	if len(labels) > 2 && labels[2] != "svc" {
		return "", fmt.Errorf("not a Service's address (NAME.NAMESPACE[.svc...])")
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	service := name + ":" + port
	if u.Scheme == "https" {
		service = "https:" + service
	}
	return strings.TrimSuffix(apiserver, "/") + "/api/v1/namespaces/" + url.PathEscape(namespace) + "/services/" + url.PathEscape(service) + "/proxy" + strings.TrimSuffix(u.Path, "/"), nil
}
