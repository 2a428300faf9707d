package certs

import (
	"bytes"
	"context"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/config"
)

// TestAWriteThatLosesToAnotherWriterIsRetried: each replica of the manager
// writes the CA bundle into the webhook configurations and the CRD as it
// starts. A replica whose write comes second (another replica, or the API
// server on a new CRD, wrote the object since it read it: "the object has
// been modified") reads the object again and writes again, keeping the
// other's change, instead of failing its start.
func TestAWriteThatLosesToAnotherWriterIsRetried(t *testing.T) {
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "CustomResourceDefinition"} {
		t.Run(kind, func(t *testing.T) {
			mutating, validating, err := config.WebhookConfigurations()
			if err != nil {
				t.Fatal(err)
			}
			crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}, Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Conversion: &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
					ClientConfig:             &apiextensionsv1.WebhookClientConfig{Service: &apiextensionsv1.ServiceReference{Namespace: "rejuv-system", Name: "rejuv-webhook"}},
					ConversionReviewVersions: []string{"v1"},
				}},
			}}
			updates := 0
			c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(mutating, validating, crd).
				WithInterceptorFuncs(interceptor.Funcs{Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					if kindOf(obj) == kind {
						updates++
						if updates == 1 {
							// Another writer changes the object between
							// this read and this write.
							other := obj.DeepCopyObject().(client.Object)
							if err := c.Get(ctx, client.ObjectKeyFromObject(obj), other); err != nil {
								return err
							}
							other.SetAnnotations(map[string]string{"written-by": "another replica"})
							if err := c.Update(ctx, other); err != nil {
								return err
							}
						}
					}
					return c.Update(ctx, obj, opts...)
				}}).Build()
			m := &Manager{Client: c, Secret: types.NamespacedName{Namespace: "rejuv-system", Name: "rejuv-webhook-certs"},
				Hosts: []string{"rejuv-webhook.rejuv-system.svc"}, CertDir: t.TempDir(), Lifetimes: testLife,
				Targets: Targets{Mutating: mutating, Validating: validating, CRDs: []string{crdName}}, Clock: clocktesting.NewFakePassiveClock(time.Now())}
			if err := m.Ensure(context.Background()); err != nil {
				t.Fatalf("Ensure: %v; want the write retried after the conflict", err)
			}
			if updates != 2 {
				t.Errorf("%d writes of the %s, want 2: one that conflicts, one after reading it again", updates, kind)
			}
			got, bundle := injected(t, c, kind, mutating.Name, validating.Name)
			if got.GetAnnotations()["written-by"] != "another replica" {
				t.Errorf("the other writer's change is lost: annotations %v", got.GetAnnotations())
			}
			if want := storedBundle(t, c, m.Secret); !bytes.Equal(bundle, want) {
				t.Errorf("the %s trusts %q, want the stored CA bundle", kind, bundle)
			}
		})
	}
}

// kindOf names the kind of the targets' objects.
func kindOf(o client.Object) string {
	switch o.(type) {
	case *admissionregistrationv1.MutatingWebhookConfiguration:
		return "MutatingWebhookConfiguration"
	case *admissionregistrationv1.ValidatingWebhookConfiguration:
		return "ValidatingWebhookConfiguration"
	case *apiextensionsv1.CustomResourceDefinition:
		return "CustomResourceDefinition"
	}
	return ""
}

// injected reads the target of kind and the CA bundle it holds (its first
// webhook's).
func injected(t *testing.T, c client.Client, kind, mutating, validating string) (client.Object, []byte) {
	t.Helper()
	ctx := context.Background()
	switch kind {
	case "MutatingWebhookConfiguration":
		o := &admissionregistrationv1.MutatingWebhookConfiguration{}
		if err := c.Get(ctx, types.NamespacedName{Name: mutating}, o); err != nil {
			t.Fatal(err)
		}
		return o, o.Webhooks[0].ClientConfig.CABundle
	case "ValidatingWebhookConfiguration":
		o := &admissionregistrationv1.ValidatingWebhookConfiguration{}
		if err := c.Get(ctx, types.NamespacedName{Name: validating}, o); err != nil {
			t.Fatal(err)
		}
		return o, o.Webhooks[0].ClientConfig.CABundle
	default:
		o := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, types.NamespacedName{Name: crdName}, o); err != nil {
			t.Fatal(err)
		}
		return o, o.Spec.Conversion.Webhook.ClientConfig.CABundle
	}
}

// storedBundle is the CA bundle kept in the Secret.
func storedBundle(t *testing.T, c client.Client, key types.NamespacedName) []byte {
	t.Helper()
	secret := &corev1.Secret{}
	if err := c.Get(context.Background(), key, secret); err != nil {
		t.Fatal(err)
	}
	return secret.Data[keyCABundle]
}
