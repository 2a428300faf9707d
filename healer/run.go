package healer

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv"
	"github.com/rejuv-dev/rejuv/config"
	"github.com/rejuv-dev/rejuv/healer/admission"
	"github.com/rejuv-dev/rejuv/healer/certs"
	"github.com/rejuv-dev/rejuv/healer/crr"
	"github.com/rejuv-dev/rejuv/healer/pause"
	"github.com/rejuv-dev/rejuv/healer/podcache"
	"github.com/rejuv-dev/rejuv/healer/recreatepolicy"
	"github.com/rejuv-dev/rejuv/healer/signals"
	"github.com/rejuv-dev/rejuv/healer/workingset"
	"github.com/rejuv-dev/rejuv/policy"
)

// stuckEvaluation is how long a step of a rule may run on past its
// deadline before the manager reports itself unhealthy.
const stuckEvaluation = 10 * time.Second

// CRDName is the ContainerRecreateRequest CRD, whose conversion the
// manager serves.
const CRDName = "containerrecreaterequests.apps.kruise.io"

// leaderElectionID names the lease the manager's replicas compete for.
const leaderElectionID = "rejuv-healer.rejuv.dev"

// The leader election lease, only in the manager's namespace and, but for
// its creation, only by name.
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=create,namespace=system
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;update,resourceNames=rejuv-healer.rejuv.dev,namespace=system
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch,namespace=system

// The emergency stop (v1alpha1.PauseConfigMap), read from the manager's
// namespace alone.
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch,namespace=system

// Metrics are served only to scrapers that authenticate and may get
// /metrics.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Run starts the manager (webhooks, controllers, certificates, metrics and
// probes) and returns when ctx ends or something fails.
func Run(ctx context.Context, cfg *rest.Config, o Options, metrics metricsserver.Options) error {
	log := ctrl.LoggerFrom(ctx)
	scheme, err := apps.NewScheme()
	if err == nil {
		err = rejuv.AddToScheme(scheme)
	}
	if err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}

	// Read and written live, before the manager's caches run: the
	// certificates, and who the manager is.
	direct, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("create client: %w", err)
	}
	var certManager *certs.Manager
	if o.CertManagement == CertsSelf {
		if certManager, err = newCertManager(direct, o); err != nil {
			return err
		}
		// The files must exist before the webhook server starts.
		if err := certManager.Ensure(ctx); err != nil {
			return fmt.Errorf("set up webhook certificates: %w", err)
		}
	}

	webhooks := webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.CertDir}
	var callers *admission.Callers
	if o.WebhookClientCA != "" {
		if callers, err = admission.LoadCallers(o.WebhookClientCA, o.WebhookClientNames); err != nil {
			return err
		}
		webhooks.TLSOpts = append(webhooks.TLSOpts, callers.TLS)
	}

	RegisterMetrics(ctrlmetrics.Registry)
	requests := recreatepolicy.RequestsV1alpha1
	if o.ExecutesRequests() {
		requests = recreatepolicy.RequestsV1beta1
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme,
		Cache:                   cacheOptions(o.Namespace, requests.Object()),
		NewCache:                podcache.New,
		Metrics:                 metrics,
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: o.Namespace,
		// The manager exits once its context ends: handing the lease over
		// then spares the next leader the lease's whole duration.
		LeaderElectionReleaseOnCancel: true,
		WebhookServer:                 webhook.NewServer(webhooks),
	})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	self, err := whoAmI(ctx, direct)
	if err != nil {
		return err
	}
	// Every replica's webhook refuses requests while Rejuv is paused:
	// watch the emergency stop in each.
	if _, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false)); err != nil {
		return fmt.Errorf("watch the emergency stop: %w", err)
	}
	stop := &pause.Switch{Reader: mgr.GetCache(), Namespace: o.Namespace}
	opts := admission.Options{
		Reader: mgr.GetAPIReader(), Client: mgr.GetClient(), Self: self,
		PolicyOnly: !o.ExecutesRequests(), Prometheus: o.Prometheus.URL != "", Callers: callers, Pause: stop,
	}
	if o.ExecutesRequests() {
		// Every replica serves the request webhook, which reads pods from
		// this cache first: start it in every replica, not only in the
		// leader, whose controllers watch pods too.
		pods, err := mgr.GetCache().GetInformer(ctx, &corev1.Pod{}, cache.BlockUntilSynced(false))
		if err != nil {
			return fmt.Errorf("watch pods for the request webhook: %w", err)
		}
		opts.Pods = &admission.PodCache{Reader: mgr.GetCache(), Synced: pods.HasSynced}
		// It counts a pod's active requests from the cache too: start
		// watching them now rather than at the first create.
		if _, err := mgr.GetCache().GetInformer(ctx, &v1beta1.ContainerRecreateRequest{}, cache.BlockUntilSynced(false)); err != nil {
			return fmt.Errorf("watch requests for the request webhook: %w", err)
		}
	}
	admission.Register(mgr.GetWebhookServer(), scheme, opts)
	if err := watchForTakeover(ctx, mgr.GetCache(), leaderWatches(requests.Object(), o.ExecutesRequests())); err != nil {
		return err
	}
	if o.ExecutesRequests() {
		if err := setupRequestControllers(mgr, o, stop); err != nil {
			return err
		}
	}
	var journal *policy.Journal
	if o.EvaluationJournal != "" {
		if journal, err = policy.OpenJournal(o.EvaluationJournal); err != nil {
			return err
		}
	}
	engine := policy.NewEngine(policy.Options{Deadline: o.RuleDeadline, MemoryLimit: uint64(o.RuleMemoryLimit.Value()), Log: log.WithName("rego"), Journal: journal})
	policies := &recreatepolicy.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Engine: engine,
		Recorder: mgr.GetEventRecorder("rejuv-healer"), Requests: requests,
		Workers: o.PolicyWorkers, EvaluationBudget: o.PolicyEvaluationBudget, Journal: journal, Pause: stop}
	var prometheus promv1.API
	if o.Prometheus.URL != "" {
		if prometheus, err = o.Prometheus.api(); err != nil {
			return err
		}
		policies.Signals = &signals.Querier{API: prometheus, Timeout: o.Prometheus.Timeout}
	}
	sampler, err := newSampler(mgr, o, prometheus)
	if err != nil {
		return err
	}
	if sampler != nil {
		policies.Memory = sampler
	}
	if err := policies.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up RecreatePolicy controller: %w", err)
	}
	if err := (&pause.Observer{Client: mgr.GetClient(), Switch: stop}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the emergency stop's observer: %w", err)
	}
	if certManager != nil {
		if err := mgr.Add(certManager); err != nil {
			return fmt.Errorf("add certificate renewal: %w", err)
		}
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	// A step of a rule that runs on past its deadline cannot be stopped
	// but with the process: the liveness probe restarts it, and the
	// journal quarantines the policy.
	if err := mgr.AddHealthzCheck("rules", func(*http.Request) error { return policy.Stuck(stuckEvaluation) }); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	log.Info("starting manager", "crrExecutor", o.CRRExecutor, "webhookPort", o.WebhookPort, "certManagement", o.CertManagement, "webhookURL", o.WebhookURL, "webhookClientCA", o.WebhookClientCA,
		"leaderElection", o.LeaderElect, "user", self)
	return mgr.Start(ctx)
}

func newCertManager(direct client.Client, o Options) (*certs.Manager, error) {
	mutating, validating, err := config.WebhookConfigurations()
	if err != nil {
		return nil, err
	}
	mutating.Name, validating.Name = o.MutatingWebhookConfiguration, o.ValidatingWebhookConfiguration
	targets := certs.Targets{
		Mutating: mutating, Validating: validating, CRDs: []string{CRDName},
		URL: o.WebhookURL, ConvertPath: admission.ConvertPath,
	}
	if !o.ExecutesRequests() {
		// Beside OpenKruise the manager serves the policy webhook alone,
		// and the CRD is OpenKruise's.
		targets.Mutating, targets.CRDs = nil, nil
		validating.Webhooks = slices.DeleteFunc(validating.Webhooks, func(w admissionregistrationv1.ValidatingWebhook) bool {
			return w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil || *w.ClientConfig.Service.Path != admission.ValidatePolicyPath
		})
	}
	return &certs.Manager{
		Client:        direct,
		Secret:        types.NamespacedName{Namespace: o.Namespace, Name: o.CertSecret},
		Hosts:         o.certHosts(),
		CertDir:       o.CertDir,
		Targets:       targets,
		CheckInterval: o.CertCheckInterval,
	}, nil
}

// setupRequestControllers adds what executes requests on the manager's
// side: the request controller and the pod readiness gates; stop is the
// emergency stop they heed.
func setupRequestControllers(mgr ctrl.Manager, o Options, stop *pause.Switch) error {
	reconciler := &crr.Reconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("rejuv-healer"),
		NodeLostGrace: o.NodeLostGrace, PickupTimeout: o.PickupTimeout, DaemonNamespace: o.Namespace, Pause: stop}
	if err := reconciler.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up ContainerRecreateRequest controller: %w", err)
	}
	if err := (&crr.PodReadinessReconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up pod readiness-gate controller: %w", err)
	}
	if err := mgr.Add(&crr.InFlightCounter{Reader: mgr.GetClient()}); err != nil {
		return fmt.Errorf("add the count of requests in flight: %w", err)
	}
	return nil
}

// newSampler adds the working set sampler of --memory-source, nil for
// none; prometheus is the manager's Prometheus, set when
// --memory-source=prometheus.
func newSampler(mgr ctrl.Manager, o Options, prometheus promv1.API) (*workingset.Sampler, error) {
	var source workingset.Source
	switch o.MemorySource {
	case MemoryMetricsAPI:
		c, err := metricsclient.NewForConfig(mgr.GetConfig())
		if err != nil {
			return nil, fmt.Errorf("create the metrics.k8s.io client: %w", err)
		}
		source = workingset.MetricsAPI{Client: c}
	case MemoryPrometheus:
		source = workingset.Prometheus{API: prometheus, Metric: o.Prometheus.WorkingSetMetric, Interval: o.MemoryInterval}
	default:
		return nil, nil
	}
	s := &workingset.Sampler{Reader: mgr.GetClient(), Source: source, Interval: o.MemoryInterval, Window: o.MemoryWindow}
	if err := mgr.Add(s); err != nil {
		return nil, fmt.Errorf("add the working set sampler: %w", err)
	}
	return s, nil
}
