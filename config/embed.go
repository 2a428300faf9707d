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

// NamePrefix is what kustomize puts before every object name in
// config/default, and what URL registration uses too.
const NamePrefix = "rejuv-"

// WebhookConfigurations returns the generated webhook configurations,
// named as installed (with NamePrefix).
func WebhookConfigurations() ([]admissionregistrationv1.MutatingWebhookConfiguration, []admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	var mutating []admissionregistrationv1.MutatingWebhookConfiguration
	var validating []admissionregistrationv1.ValidatingWebhookConfiguration
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
			var m admissionregistrationv1.MutatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &m); err != nil {
				return nil, nil, fmt.Errorf("read embedded MutatingWebhookConfiguration: %w", err)
			}
			m.Name = NamePrefix + m.Name
			mutating = append(mutating, m)
		case "ValidatingWebhookConfiguration":
			var v admissionregistrationv1.ValidatingWebhookConfiguration
			if err := yaml.UnmarshalStrict(doc, &v); err != nil {
				return nil, nil, fmt.Errorf("read embedded ValidatingWebhookConfiguration: %w", err)
			}
			v.Name = NamePrefix + v.Name
			validating = append(validating, v)
		default:
			return nil, nil, fmt.Errorf("read embedded webhook manifests: unexpected kind %q", kind.Kind)
		}
	}
	return mutating, validating, nil
}
