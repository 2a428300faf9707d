package certs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultInstallWait is how long a replica starting waits for a webhook
// configuration that is not installed yet. The install applies the
// configurations after the manager's Deployment (kustomize and helm order
// webhooks last, so that no webhook is in place before its server), and on
// a loaded cluster a replica can start before they are there. Within the
// startup probe's minute.
const DefaultInstallWait = 30 * time.Second

// errNotInstalled is a webhook configuration missing from the cluster.
var errNotInstalled = errors.New("it is not installed (install Rejuv's manifests)")

// Targets are the objects that must trust the webhook server's CA.
type Targets struct {
	// Mutating and Validating are the webhook configurations, named as
	// installed (nil: none). In-cluster they exist already (from the
	// install) and only their CA bundle is set.
	Mutating   *admissionregistrationv1.MutatingWebhookConfiguration
	Validating *admissionregistrationv1.ValidatingWebhookConfiguration
	// CRDs whose conversion webhook is served by the manager.
	CRDs []string
	// URL, when set, is the webhook server's base URL for runs outside the
	// cluster: the configurations are created or rewritten to call
	// URL+path, and the CRDs' conversion to call URL+ConvertPath.
	URL         string
	ConvertPath string
	// InstallWait is how long a configuration not installed is waited
	// for, read again every second (zero: DefaultInstallWait).
	InstallWait time.Duration
}

// In the cluster the manager reads and updates only its own webhook
// configurations and CRD, by name (kustomize adds the install's prefix to
// the configurations' names here too). Registering by URL, outside the
// cluster, also creates the configurations, with the caller's rights. The
// validating configuration is there in every install; the rights on the
// mutating one and on the CRD are granted where the webhooks they call
// are served (package admission), since an install beside OpenKruise has
// neither.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,verbs=get;update,resourceNames=validating-webhook-configuration

func (t Targets) inject(ctx context.Context, c client.Client, caBundle []byte) error {
	if t.Mutating != nil {
		want := t.Mutating.DeepCopy()
		if err := t.apply(ctx, c, "MutatingWebhookConfiguration", want, &admissionregistrationv1.MutatingWebhookConfiguration{}, func(o client.Object) bool {
			hooks := o.(*admissionregistrationv1.MutatingWebhookConfiguration).Webhooks
			return t.setEach(len(hooks), func(j int) *admissionregistrationv1.WebhookClientConfig { return &hooks[j].ClientConfig }, caBundle)
		}); err != nil {
			return err
		}
	}
	if t.Validating != nil {
		want := t.Validating.DeepCopy()
		if err := t.apply(ctx, c, "ValidatingWebhookConfiguration", want, &admissionregistrationv1.ValidatingWebhookConfiguration{}, func(o client.Object) bool {
			hooks := o.(*admissionregistrationv1.ValidatingWebhookConfiguration).Webhooks
			return t.setEach(len(hooks), func(j int) *admissionregistrationv1.WebhookClientConfig { return &hooks[j].ClientConfig }, caBundle)
		}); err != nil {
			return err
		}
	}
	for _, name := range t.CRDs {
		if err := t.injectCRD(ctx, c, name, caBundle); err != nil {
			return err
		}
	}
	return nil
}

// apply reads the installed object (creating want when URL registration
// may create it), lets set adjust it, and writes it when set changed it.
// Every replica does so as it starts, with the same bundle: a write that
// loses to another's is read again and retried (see raced).
func (t Targets) apply(ctx context.Context, c client.Client, kind string, want, empty client.Object, set func(client.Object) bool) error {
	return t.untilInstalled(ctx, kind, want.GetName(), func() error {
		return retry.OnError(retry.DefaultRetry, raced, func() error {
			return t.applyOnce(ctx, c, kind, want.DeepCopyObject().(client.Object), empty.DeepCopyObject().(client.Object), set)
		})
	})
}

// untilInstalled calls write again every second while it finds the object
// not installed, for up to InstallWait; then its error stands.
func (t Targets) untilInstalled(ctx context.Context, kind, name string, write func() error) error {
	limit := t.InstallWait
	if limit == 0 {
		limit = DefaultInstallWait
	}
	var err error
	_ = wait.PollUntilContextTimeout(ctx, time.Second, limit, true, func(context.Context) (bool, error) {
		logged := errors.Is(err, errNotInstalled) // by the read before
		if err = write(); !errors.Is(err, errNotInstalled) {
			return true, nil
		}
		if !logged {
			ctrl.LoggerFrom(ctx).Info("waiting for the install to create a webhook configuration", "kind", kind, "name", name, "for", limit.String())
		}
		return false, nil
	})
	return err
}

// raced says whether a write lost to another writer's (a conflict, or an
// object created meanwhile): the object is read again and the write
// retried. Every replica of the manager writes the same CA bundle at
// start, and the API server writes a new CRD's status, so at a fresh
// install a conflict is routine, not a reason for the manager to exit.
func raced(err error) bool {
	return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err)
}

// applyOnce is one read and write of apply.
func (t Targets) applyOnce(ctx context.Context, c client.Client, kind string, want, cur client.Object, set func(client.Object) bool) error {
	err := c.Get(ctx, types.NamespacedName{Name: want.GetName()}, cur)
	switch {
	case apierrors.IsNotFound(err) && t.URL != "":
		set(want)
		if err := c.Create(ctx, want); err != nil {
			return fmt.Errorf("create %s %s: %w", kind, want.GetName(), err)
		}
		return nil
	case apierrors.IsNotFound(err):
		return fmt.Errorf("set CA bundle of %s %s: %w", kind, want.GetName(), errNotInstalled)
	case err != nil:
		return fmt.Errorf("read %s %s: %w", kind, want.GetName(), err)
	}
	if !set(cur) {
		return nil
	}
	if err := c.Update(ctx, cur); err != nil {
		return fmt.Errorf("set CA bundle of %s %s: %w", kind, want.GetName(), err)
	}
	return nil
}

// setEach sets the client config of each of n webhooks and reports whether
// any changed.
func (t Targets) setEach(n int, clientConfig func(int) *admissionregistrationv1.WebhookClientConfig, caBundle []byte) bool {
	changed := false
	for j := range n {
		changed = t.setClientConfig(clientConfig(j), caBundle) || changed
	}
	return changed
}

// setClientConfig points a webhook at the server with caBundle and reports
// whether anything changed.
func (t Targets) setClientConfig(cc *admissionregistrationv1.WebhookClientConfig, caBundle []byte) bool {
	changed := !bytes.Equal(cc.CABundle, caBundle)
	cc.CABundle = caBundle
	if t.URL != "" && cc.Service != nil {
		path := ""
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		url := strings.TrimSuffix(t.URL, "/") + path
		cc.URL, cc.Service, changed = &url, nil, true
	}
	return changed
}

// injectCRD points the CRD's conversion webhook at the server with
// caBundle, retried as apply is.
func (t Targets) injectCRD(ctx context.Context, c client.Client, name string, caBundle []byte) error {
	return retry.OnError(retry.DefaultRetry, raced, func() error { return t.injectCRDOnce(ctx, c, name, caBundle) })
}

// injectCRDOnce is one read and write of injectCRD.
func (t Targets) injectCRDOnce(ctx context.Context, c client.Client, name string, caBundle []byte) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, types.NamespacedName{Name: name}, crd); err != nil {
		return fmt.Errorf("read CRD %s: %w", name, err)
	}
	conv := crd.Spec.Conversion
	if t.URL != "" {
		url := strings.TrimSuffix(t.URL, "/") + t.ConvertPath
		want := &apiextensionsv1.CustomResourceConversion{
			Strategy: apiextensionsv1.WebhookConverter,
			Webhook: &apiextensionsv1.WebhookConversion{
				ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
				ConversionReviewVersions: []string{"v1"},
			},
		}
		if conv != nil && conv.Webhook != nil && conv.Webhook.ClientConfig != nil && conv.Webhook.ClientConfig.URL != nil &&
			*conv.Webhook.ClientConfig.URL == url && bytes.Equal(conv.Webhook.ClientConfig.CABundle, caBundle) {
			return nil
		}
		crd.Spec.Conversion = want
	} else {
		if conv == nil || conv.Strategy != apiextensionsv1.WebhookConverter || conv.Webhook == nil || conv.Webhook.ClientConfig == nil {
			return fmt.Errorf("set CA bundle of CRD %s: it has no conversion webhook (install Rejuv's manifests)", name)
		}
		if bytes.Equal(conv.Webhook.ClientConfig.CABundle, caBundle) {
			return nil
		}
		conv.Webhook.ClientConfig.CABundle = caBundle
	}
	if err := c.Update(ctx, crd); err != nil {
		return fmt.Errorf("set conversion webhook of CRD %s: %w", name, err)
	}
	return nil
}
