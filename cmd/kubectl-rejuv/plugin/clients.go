package plugin

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/rejuv"
)

// clients are made once per command from the kubeconfig flags.
type clients struct {
	client    client.WithWatch
	mapper    meta.RESTMapper
	scheme    *runtime.Scheme
	namespace string
	// explicit says the namespace was given with -n rather than taken
	// from the kubeconfig's context.
	explicit bool
}

// newScheme is the scheme of the objects the plugin reads and writes:
// Kubernetes' own, both versions of apps.kruise.io, and rejuv.dev.
func newScheme() (*runtime.Scheme, error) {
	s, err := apps.NewScheme()
	if err != nil {
		return nil, err
	}
	if err := rejuv.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Clients connects to the cluster of the kubeconfig flags, once.
func (o *Options) Clients() (*clients, error) {
	if o.clients != nil {
		return o.clients, nil
	}
	cfg, err := o.Config.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("read the kubeconfig: %w", err)
	}
	cfg.UserAgent = "kubectl-rejuv"
	// The API server's warnings (a webhook's, a deprecated field) go to
	// stderr as kubectl prints them.
	cfg.WarningHandler = rest.NewWarningWriter(o.Streams.ErrOut, rest.WarningWriterOptions{Deduplicate: true})
	ns, explicit, err := o.Config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, fmt.Errorf("read the namespace from the kubeconfig: %w", err)
	}
	mapper, err := o.Config.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("discover the cluster's resources: %w", err)
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", cfg.Host, err)
	}
	o.clients = &clients{client: c, mapper: mapper, scheme: scheme, namespace: ns, explicit: explicit}
	return o.clients, nil
}
