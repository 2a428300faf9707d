package config

import (
	"bytes"
	_ "embed"
	"fmt"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	"sigs.k8s.io/yaml"
)

// webhookManifests is controller-gen's output for the manager's webhooks.
//
//go:embed webhook/manifests.yaml
var webhookManifests []byte

// WebhookConfigurations returns the generated webhook configurations, as
// controller-gen names them (kustomize adds the prefix of the install).
func WebhookConfigurations() (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	var mutating *admissionregistrationv1.MutatingWebhookConfiguration
	var validating *admissionregistrationv1.ValidatingWebhookConfiguration
	for doc := range bytes.SplitSeq(webhookManifests, []byte("\n---")) {
		doc = bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(doc), []byte("---")))
		if len(doc) == 0 {
			continue
		}
		var kind struct{ Kind string }
		if err := yaml.Unmarshal(doc, &kind); err != nil {
			return nil, nil, fmt.Errorf("read embedded webhook manifests: %w", err)
		}
		switch kind.Kind {
		case "MutatingWebhookConfiguration":
			mutating = &admissionregistrationv1.MutatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict(doc, mutating); err != nil {
				return nil, nil, fmt.Errorf("read embedded MutatingWebhookConfiguration: %w", err)
			}
		case "ValidatingWebhookConfiguration":
			validating = &admissionregistrationv1.ValidatingWebhookConfiguration{}
			if err := yaml.UnmarshalStrict(doc, validating); err != nil {
				return nil, nil, fmt.Errorf("read embedded ValidatingWebhookConfiguration: %w", err)
			}
		default:
			return nil, nil, fmt.Errorf("read embedded webhook manifests: unexpected kind %q", kind.Kind)
		}
	}
	if mutating == nil || validating == nil {
		return nil, nil, fmt.Errorf("read embedded webhook manifests: want one MutatingWebhookConfiguration and one ValidatingWebhookConfiguration")
	}
	return mutating, validating, nil
}
