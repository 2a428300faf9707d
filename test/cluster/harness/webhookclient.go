package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// The API server authenticates itself to admission webhooks with a client
// certificate of its own CA (not the cluster's, whose certificates every
// user and node holds), as its AdmissionConfiguration says: a webhook
// given that CA can tell the API server from a pod sending forged reviews.

// WebhookClientName is the common name of the API server's webhook client
// certificate.
const WebhookClientName = "kube-apiserver-webhook-client"

// WebhookClientCA is the CA bundle (PEM) the API server's webhook client
// certificate chains to: a manager's --webhook-client-ca.
func (c Config) WebhookClientCA() string { return c.pki("webhook-client-ca.crt") }

// WebhookClientCert is the API server's webhook client certificate and key
// (PEM files), for tests that call a webhook as the API server does.
func (c Config) WebhookClientCert() (crt, key string) {
	return c.pki("apiserver-webhook-client.crt"), c.pki("apiserver-webhook-client.key")
}

// admissionConfig is the API server's --admission-control-config-file.
func (c Config) admissionConfig() string { return c.pki("admission.yaml") }

// writeWebhookClientPKI creates the webhook client CA and the API server's
// certificate in dir.
func writeWebhookClientPKI(dir string) error {
	ca, err := newCA(dir, "webhook-client-ca", "rejuv-harness-webhook-client-ca")
	if err != nil {
		return err
	}
	return ca.issue(dir, certRequest{file: "apiserver-webhook-client", cn: WebhookClientName, client: true})
}

// writeAdmissionConfig writes the AdmissionConfiguration that has the API
// server present its webhook client certificate to every webhook (user
// "*" of its kubeconfig), mutating and validating.
func writeAdmissionConfig(cfg Config) error {
	kubeconfig := cfg.pki("webhook-client.kubeconfig")
	crt, err := os.ReadFile(cfg.pki("apiserver-webhook-client.crt"))
	if err != nil {
		return fmt.Errorf("write the API server's webhook kubeconfig: %w", err)
	}
	key, err := os.ReadFile(cfg.pki("apiserver-webhook-client.key"))
	if err != nil {
		return fmt.Errorf("write the API server's webhook kubeconfig: %w", err)
	}
	kc := clientcmdapi.NewConfig()
	kc.AuthInfos["*"] = &clientcmdapi.AuthInfo{ClientCertificateData: crt, ClientKeyData: key}
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		return fmt.Errorf("write the API server's webhook kubeconfig: %w", err)
	}
	abs, err := filepath.Abs(kubeconfig)
	if err != nil {
		return fmt.Errorf("write the API server's admission configuration: %w", err)
	}
	var doc strings.Builder
	doc.WriteString("apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n")
	for _, name := range []string{"ValidatingAdmissionWebhook", "MutatingAdmissionWebhook"} {
		fmt.Fprintf(&doc, `- name: %s
  configuration:
    apiVersion: apiserver.config.k8s.io/v1
    kind: WebhookAdmissionConfiguration
    kubeConfigFile: %q
`, name, abs)
	}
	if err := os.WriteFile(cfg.admissionConfig(), []byte(doc.String()), 0o600); err != nil {
		return fmt.Errorf("write the API server's admission configuration: %w", err)
	}
	return nil
}
