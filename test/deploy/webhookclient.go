package deploy

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WebhookClientCA is the ConfigMap, in Namespace, that
// config/components/webhook-client-auth has the manager read the API
// server's webhook client CA from (test/deploy/overlay includes it).
const WebhookClientCA = "rejuv-webhook-client-ca"

// putWebhookClientCA creates Namespace and the ConfigMap WebhookClientCA
// with the harness's webhook client CA, as a user of the component does
// before installing.
func (s *Stack) putWebhookClientCA(ctx context.Context) error {
	bundle, err := os.ReadFile(s.cluster.Config.WebhookClientCA())
	if err != nil {
		return fmt.Errorf("read the API server's webhook client CA: %w", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}
	if _, err := s.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", Namespace, err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: WebhookClientCA, Namespace: Namespace}, Data: map[string]string{"ca.crt": string(bundle)}}
	_, err = s.Kube.CoreV1().ConfigMaps(Namespace).Create(ctx, cm, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		_, err = s.Kube.CoreV1().ConfigMaps(Namespace).Update(ctx, cm, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("put ConfigMap %s/%s: %w", Namespace, WebhookClientCA, err)
	}
	return nil
}
