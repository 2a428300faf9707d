package config

import "testing"

func TestWebhookConfigurationsAreReadFromTheGeneratedManifests(t *testing.T) {
	m, v, err := WebhookConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "mutating-webhook-configuration" || len(m.Webhooks) < 2 {
		t.Errorf("mutating = %+v, want mutating-webhook-configuration with the CRR and pod webhooks", m)
	}
	if v.Name != "validating-webhook-configuration" || len(v.Webhooks) < 2 {
		t.Errorf("validating = %+v, want validating-webhook-configuration with the CRR and policy webhooks", v)
	}
	for _, w := range m.Webhooks {
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil {
			t.Errorf("webhook %s has no service path", w.Name)
		}
	}
}
