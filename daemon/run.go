package daemon

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
	"github.com/rejuv-dev/rejuv/daemon/executor"
)

// Run starts the daemon (runtime connection, the executor of the node's
// ContainerRecreateRequests, metrics and probes) and returns when ctx ends or
// something fails.
func Run(ctx context.Context, cfg *rest.Config, o Options, metrics metricsserver.Options) error {
	scheme, err := newScheme()
	if err != nil {
		return fmt.Errorf("build scheme: %w", err)
	}
	// The daemon's caches hold only its own node's requests and pods, so its
	// memory does not grow with the cluster.
	byObject := map[client.Object]cache.ByObject{
		&v1beta1.ContainerRecreateRequest{}: {Label: labels.SelectorFromSet(labels.Set{v1beta1.NodeNameLabel: o.NodeName})},
		&corev1.Pod{}:                       {Field: fields.OneTermEqualSelector("spec.nodeName", o.NodeName)},
	}
	// Nothing the daemon does reads managedFields, and a pod's are often
	// as large as the rest of it.
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme, Metrics: metrics, HealthProbeBindAddress: o.ProbeAddr,
		Cache: cache.Options{ByObject: byObject, DefaultTransform: cache.TransformStripManagedFields()}})
	if err != nil {
		return fmt.Errorf("create manager: %w", err)
	}
	cri.RegisterMetrics()
	executor.RegisterMetrics()
	runtime := &Runtime{Socket: o.CRISocket, HostRunDir: o.HostRunDir}
	if err := mgr.Add(runtime); err != nil {
		return fmt.Errorf("add runtime connection: %w", err)
	}
	if err := (&executor.Executor{Client: mgr.GetClient(), Runtime: runtime, NodeName: o.NodeName, Recorder: mgr.GetEventRecorder("rejuv-daemon")}).SetupWithManager(mgr); err != nil {
		return fmt.Errorf("set up the executor: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return fmt.Errorf("add health check: %w", err)
	}
	if err := mgr.AddReadyzCheck("runtime", runtime.ReadyCheck); err != nil {
		return fmt.Errorf("add readiness check: %w", err)
	}
	ctrl.LoggerFrom(ctx).Info("starting daemon", "node", o.NodeName, "criSocket", o.CRISocket, "hostRunDir", o.HostRunDir)
	return mgr.Start(ctx)
}

// newScheme holds only what the daemon reads and writes: pods (and the
// core group's options and status types) and v1beta1 requests. Unlike
// apps.NewScheme, it does not register every built-in API group a second
// time beside client-go's own scheme.
func newScheme() (*kruntime.Scheme, error) {
	s := kruntime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := v1beta1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}
