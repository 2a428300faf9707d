package config

import "testing"

func TestWebhookConfigurationsAreReadFromTheGeneratedManifests(t *testing.T) {
	m, v, err := WebhookConfigurations()
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 1 || m[0].Name != "rejuv-mutating-webhook-configuration" || len(m[0].Webhooks) < 2 {
		t.Errorf("mutating = %+v, want rejuv-mutating-webhook-configuration with the CRR and pod webhooks", m)
	}
	if len(v) != 1 || v[0].Name != "rejuv-validating-webhook-configuration" || len(v[0].Webhooks) < 1 {
		t.Errorf("validating = %+v", v)
	}
	for _, w := range m[0].Webhooks {
		if w.ClientConfig.Service == nil || w.ClientConfig.Service.Path == nil {
			t.Errorf("webhook %s has no service path", w.Name)
		}
	}
}
