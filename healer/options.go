package healer

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/rejuv-dev/rejuv/healer/crr"
	"github.com/rejuv-dev/rejuv/healer/recreatepolicy"
	"github.com/rejuv-dev/rejuv/healer/workingset"
	"github.com/rejuv-dev/rejuv/policy"
)

// Certificate management modes.
const (
	// CertsSelf: the manager creates and renews its own CA and serving
	// certificate and injects the CA bundle.
	CertsSelf = "self"
	// CertsExternal: certificates are provided in CertDir (cert-manager)
	// and the CA bundle is injected by whoever provides them.
	CertsExternal = "external"
)

// Who executes ContainerRecreateRequests.
const (
	// ExecutorRejuv: Rejuv does. The manager serves the request webhooks,
	// the CRD conversion and the pod readiness gates and runs the request
	// controller; Rejuv's daemon stops the containers.
	ExecutorRejuv = "rejuv"
	// ExecutorOpenKruise: an OpenKruise installed in the cluster does, from
	// its own CRD, which serves v1alpha1 alone. The manager runs the
	// policy controller, which creates v1alpha1 requests, and serves only
	// the RecreatePolicy webhook.
	ExecutorOpenKruise = "openkruise"
)

// Options are the manager's settings, one flag each.
type Options struct {
	Namespace     string
	MetricsAddr   string
	MetricsSecure bool
	// Profiling serves Go's runtime profiles at /debug/pprof/ on the
	// metrics endpoint.
	Profiling      bool
	ProbeAddr      string
	LeaderElect    bool
	WebhookHost    string
	WebhookPort    int
	CertDir        string
	CertManagement string
	CertSecret     string
	// CRRExecutor is who executes the requests: ExecutorRejuv or
	// ExecutorOpenKruise.
	CRRExecutor    string
	WebhookService string
	// MutatingWebhookConfiguration and ValidatingWebhookConfiguration are
	// the installed configurations whose CA bundle the manager keeps.
	MutatingWebhookConfiguration   string
	ValidatingWebhookConfiguration string
	WebhookURL                     string
	// WebhookClientCA and WebhookClientNames authenticate the API server
	// to the admission webhooks; none when WebhookClientCA is empty.
	WebhookClientCA    string
	WebhookClientNames []string
	NodeLostGrace      time.Duration
	PickupTimeout      time.Duration
	// RuleDeadline bounds each evaluation of a policy's rules for a pod.
	RuleDeadline time.Duration
	// RuleMemoryLimit bounds what each evaluation of a policy's rules for
	// a pod may allocate.
	RuleMemoryLimit resource.QuantityValue
	// EvaluationJournal is the directory where evaluations that ran past
	// their bounds in a step the sandbox cannot stop are recorded, so
	// that a restarted manager quarantines their policies; none when "".
	EvaluationJournal string
	// PolicyWorkers is how many policies are reconciled at once.
	PolicyWorkers int
	// PolicyEvaluationBudget bounds one pass of a policy's rules over its
	// pods; a policy over it halts.
	PolicyEvaluationBudget time.Duration
	// MemorySource is where the working set comes from: MemoryMetricsAPI,
	// MemoryPrometheus or MemoryNone.
	MemorySource string
	// Prometheus is the Prometheus the manager queries.
	Prometheus PrometheusOptions
	// MemoryInterval is the time between working set samples, and
	// MemoryWindow how far back each container's window reaches.
	MemoryInterval, MemoryWindow time.Duration
	CertCheckInterval            time.Duration
	webhookURLHostForCertSAN     string
}

// Where the working set of containers comes from.
const (
	MemoryMetricsAPI = "metrics.k8s.io"
	MemoryPrometheus = "prometheus"
	MemoryNone       = "none"
)

// PrometheusOptions say how the manager reaches Prometheus.
type PrometheusOptions struct {
	URL string
	// BearerTokenFile is read again for every query, so that a rotated
	// token is used.
	BearerTokenFile string
	CAFile          string
	// InsecureSkipVerify skips the check of Prometheus's certificate.
	InsecureSkipVerify bool
	// Timeout bounds each query.
	Timeout time.Duration
	// WorkingSetMetric is the working set series.
	WorkingSetMetric string
}

// maxMemorySlots bounds a window's slots (4 bytes each).
const maxMemorySlots = 100_000

// BindFlags registers the options on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "rejuv-system"
	}
	fs.StringVar(&o.Namespace, "namespace", ns, "namespace the manager runs in (default $POD_NAMESPACE or rejuv-system)")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", `address of the metrics endpoint; "0" turns it off`)
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS, only to clients authorized to get /metrics")
	fs.BoolVar(&o.Profiling, "profiling", false, "serve Go's runtime profiles (heap, CPU, goroutines) at /debug/pprof/ on the metrics endpoint, behind its authentication and authorization when secure")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz")
	fs.BoolVar(&o.LeaderElect, "leader-elect", true, "elect a leader among replicas; only it runs controllers (all serve webhooks)")
	fs.StringVar(&o.WebhookHost, "webhook-host", "", "address the webhook server binds to (default all)")
	fs.IntVar(&o.WebhookPort, "webhook-port", 9443, "port of the webhook server")
	fs.StringVar(&o.CertDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory of the webhook server's tls.crt and tls.key")
	fs.StringVar(&o.CertManagement, "cert-management", CertsSelf, `"self": create, renew and inject certificates; "external": use those in --cert-dir (cert-manager)`)
	fs.StringVar(&o.CertSecret, "cert-secret", "rejuv-webhook-certs", "Secret, in --namespace, that stores self-managed certificates")
	fs.StringVar(&o.WebhookService, "webhook-service", "rejuv-webhook-service", "Service, in --namespace, through which the API server reaches the webhooks")
	fs.StringVar(&o.CRRExecutor, "crr-executor", ExecutorRejuv, `who executes ContainerRecreateRequests: "rejuv" (Rejuv's request controller, webhooks and daemon) or "openkruise" (an OpenKruise installed beside Rejuv; the manager then only creates v1alpha1 requests for its policies)`)
	fs.StringVar(&o.MutatingWebhookConfiguration, "mutating-webhook-configuration", "rejuv-mutating-webhook-configuration", "the MutatingWebhookConfiguration whose CA bundle the manager keeps (with --cert-management=self and --crr-executor=rejuv)")
	fs.StringVar(&o.ValidatingWebhookConfiguration, "validating-webhook-configuration", "rejuv-validating-webhook-configuration", "the ValidatingWebhookConfiguration whose CA bundle the manager keeps (with --cert-management=self)")
	fs.StringVar(&o.WebhookClientCA, "webhook-client-ca", "", "CA bundle (PEM) that the API server's webhook client certificate chains to (its --admission-control-config-file); when set, the admission webhooks answer only clients presenting such a certificate, and the conversion webhook, which the API server calls without one, everyone; only then does the policy webhook warn about the pods a policy selects")
	fs.Func("webhook-client-names", "comma-separated common names accepted in a webhook client certificate, with --webhook-client-ca (default any the CA signed)", func(v string) error {
		o.WebhookClientNames = append(o.WebhookClientNames, strings.Split(v, ",")...)
		return nil
	})
	fs.StringVar(&o.WebhookURL, "webhook-url", "", "base URL under which the API server reaches the webhooks when the manager runs outside the cluster; the manager then registers them by URL")
	fs.DurationVar(&o.NodeLostGrace, "node-lost-grace", crr.DefaultNodeLostGrace, "how long a pod's node may be NotReady or gone before its requests are ended (a request is kept while its daemon writes to it, until the daemon is silent that long)")
	fs.DurationVar(&o.PickupTimeout, "pickup-timeout", crr.DefaultPickupTimeout, "how long a request may wait for a daemon before the manager warns")
	fs.DurationVar(&o.RuleDeadline, "rule-deadline", policy.DefaultDeadline, "how long a policy's rules may run for one pod before they are stopped")
	o.RuleMemoryLimit.Quantity = *resource.NewQuantity(policy.DefaultMemoryLimit, resource.BinarySI)
	fs.Var(&o.RuleMemoryLimit, "rule-memory-limit", "how much a policy's rules may allocate for one pod before they are stopped (garbage included; a quantity such as 32Mi)")
	fs.StringVar(&o.EvaluationJournal, "evaluation-journal", "", "a directory that outlives the manager's process (an emptyDir) where a rule that runs past its deadline or memory bound in one step the sandbox cannot stop is recorded, so that the restarted manager quarantines its policy (condition Halted, reason EvaluationInterrupted) instead of running it again; none when empty")
	fs.IntVar(&o.PolicyWorkers, "policy-workers", 4, "how many RecreatePolicies are reconciled at once, so that a slow one does not hold the others back")
	fs.DurationVar(&o.PolicyEvaluationBudget, "policy-evaluation-budget", recreatepolicy.DefaultEvaluationBudget, "how long one pass may evaluate a policy's rules over its pods; a policy over it halts (condition Halted, reason EvaluationBudget) until its spec changes")
	fs.StringVar(&o.MemorySource, "memory-source", MemoryMetricsAPI, `where the working set of containers comes from, for the memory rules: "metrics.k8s.io" (metrics-server), "prometheus" (--prometheus-url; a new window is filled from its history at once) or "none"`)
	fs.StringVar(&o.Prometheus.URL, "prometheus-url", "", "base URL of the Prometheus the manager queries for policies' signals and with --memory-source=prometheus, such as http://prometheus.monitoring:9090")
	fs.StringVar(&o.Prometheus.BearerTokenFile, "prometheus-bearer-token-file", "", "file whose content is sent to Prometheus as a bearer token, read again for every query")
	fs.StringVar(&o.Prometheus.CAFile, "prometheus-ca-file", "", "CA bundle that Prometheus's certificate must chain to (default the system's)")
	fs.BoolVar(&o.Prometheus.InsecureSkipVerify, "prometheus-insecure-skip-verify", false, "do not check Prometheus's certificate")
	fs.DurationVar(&o.Prometheus.Timeout, "prometheus-timeout", 10*time.Second, "how long one query to Prometheus may take")
	fs.StringVar(&o.Prometheus.WorkingSetMetric, "prometheus-working-set-metric", workingset.DefaultWorkingSetMetric, "the working set series, labelled namespace, pod, container and id as the kubelet's cAdvisor endpoint exports it")
	fs.DurationVar(&o.MemoryInterval, "memory-sample-interval", workingset.DefaultInterval, "time between working set samples, and the width of a window's slot")
	fs.DurationVar(&o.MemoryWindow, "memory-window", workingset.DefaultWindow, "how far back each container's working set window reaches; a memory-leak rule's minObservation beyond it can never be met")
	fs.DurationVar(&o.CertCheckInterval, "cert-check-interval", 10*time.Minute, "how often self-managed certificates are checked for renewal")
}

// Validate reports every bad option at once, naming the flag.
func (o *Options) Validate() error {
	var errs []error
	switch o.CertManagement {
	case CertsSelf, CertsExternal:
	default:
		errs = append(errs, fmt.Errorf("--cert-management: %q is not %q or %q", o.CertManagement, CertsSelf, CertsExternal))
	}
	switch o.CRRExecutor {
	case ExecutorRejuv, ExecutorOpenKruise:
	default:
		errs = append(errs, fmt.Errorf("--crr-executor: %q is not %q or %q", o.CRRExecutor, ExecutorRejuv, ExecutorOpenKruise))
	}
	for flagName, v := range map[string]string{"--webhook-service": o.WebhookService, "--mutating-webhook-configuration": o.MutatingWebhookConfiguration, "--validating-webhook-configuration": o.ValidatingWebhookConfiguration, "--cert-secret": o.CertSecret} {
		if flagName == "--mutating-webhook-configuration" && !o.ExecutesRequests() {
			continue
		}
		if o.CertManagement == CertsSelf && v == "" {
			errs = append(errs, fmt.Errorf("%s: must not be empty with --cert-management=self", flagName))
		}
	}
	if o.WebhookPort <= 0 || o.WebhookPort > 65535 {
		errs = append(errs, fmt.Errorf("--webhook-port: %d is not a TCP port", o.WebhookPort))
	}
	if o.WebhookURL != "" {
		u, err := url.Parse(o.WebhookURL)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--webhook-url: %w", err))
		case u.Scheme != "https" || u.Host == "":
			errs = append(errs, fmt.Errorf("--webhook-url: %q must be an https:// URL with a host", o.WebhookURL))
		case o.CertManagement != CertsSelf:
			errs = append(errs, errors.New("--webhook-url: needs --cert-management=self (the manager registers the webhooks with its own CA)"))
		default:
			host, _, splitErr := net.SplitHostPort(u.Host)
			if splitErr != nil {
				host = u.Host
			}
			o.webhookURLHostForCertSAN = host
		}
	}
	if len(o.WebhookClientNames) > 0 && o.WebhookClientCA == "" {
		errs = append(errs, errors.New("--webhook-client-names: needs --webhook-client-ca, which verifies the certificates they name"))
	}
	if slices.Contains(o.WebhookClientNames, "") {
		errs = append(errs, fmt.Errorf("--webhook-client-names: %q holds an empty name", strings.Join(o.WebhookClientNames, ",")))
	}
	for name, d := range map[string]time.Duration{"--node-lost-grace": o.NodeLostGrace, "--pickup-timeout": o.PickupTimeout, "--rule-deadline": o.RuleDeadline, "--policy-evaluation-budget": o.PolicyEvaluationBudget, "--cert-check-interval": o.CertCheckInterval} {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("%s: %s must be positive", name, d))
		}
	}
	if o.RuleMemoryLimit.Sign() <= 0 {
		errs = append(errs, fmt.Errorf("--rule-memory-limit: %s must be positive", &o.RuleMemoryLimit))
	}
	switch o.MemorySource {
	case MemoryMetricsAPI, MemoryNone:
	case MemoryPrometheus:
		if o.Prometheus.URL == "" {
			errs = append(errs, errors.New("--prometheus-url: must be set with --memory-source=prometheus"))
		}
	default:
		errs = append(errs, fmt.Errorf("--memory-source: %q is not %q, %q or %q", o.MemorySource, MemoryMetricsAPI, MemoryPrometheus, MemoryNone))
	}
	if o.Prometheus.URL != "" {
		if u, err := url.Parse(o.Prometheus.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("--prometheus-url: %q is not an http:// or https:// URL with a host", o.Prometheus.URL))
		}
	}
	if o.Prometheus.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("--prometheus-timeout: %s must be positive", o.Prometheus.Timeout))
	}
	switch {
	case o.MemoryInterval < time.Second:
		errs = append(errs, fmt.Errorf("--memory-sample-interval: %s is below 1s", o.MemoryInterval))
	case o.MemoryWindow < 2*o.MemoryInterval:
		errs = append(errs, fmt.Errorf("--memory-window: %s is shorter than two samples (--memory-sample-interval %s)", o.MemoryWindow, o.MemoryInterval))
	case o.MemoryWindow/o.MemoryInterval > maxMemorySlots:
		errs = append(errs, fmt.Errorf("--memory-window: %s holds more than %d samples of %s (%d bytes each per container)", o.MemoryWindow, maxMemorySlots, o.MemoryInterval, 4))
	}
	if o.PolicyWorkers < 1 {
		errs = append(errs, fmt.Errorf("--policy-workers: %d must be at least 1", o.PolicyWorkers))
	}
	return errors.Join(errs...)
}

// ExecutesRequests reports whether Rejuv executes the requests itself.
func (o *Options) ExecutesRequests() bool { return o.CRRExecutor != ExecutorOpenKruise }

// certHosts are the names the serving certificate must cover.
func (o *Options) certHosts() []string {
	if o.WebhookURL != "" {
		return []string{o.webhookURLHostForCertSAN}
	}
	svc := o.WebhookService + "." + o.Namespace
	return []string{svc + ".svc", svc + ".svc.cluster.local", svc}
}
