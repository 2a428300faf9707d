package healer

import (
	"testing"

	"github.com/rejuv-dev/rejuv/healer/admission"
)

// TestCertificatesBesideOpenKruise: beside OpenKruise the manager keeps
// the CA bundle of its policy webhook alone: no mutating configuration, no
// CRD, and, when it registers by URL, no request webhook.
func TestCertificatesBesideOpenKruise(t *testing.T) {
	for _, executor := range []string{ExecutorRejuv, ExecutorOpenKruise} {
		o := parsed(t, "--crr-executor="+executor, "--webhook-url=https://10.0.0.1:9443")
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		m, err := newCertManager(nil, *o)
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, w := range m.Targets.Validating.Webhooks {
			paths = append(paths, *w.ClientConfig.Service.Path)
		}
		if executor == ExecutorRejuv {
			if m.Targets.Mutating == nil || len(m.Targets.CRDs) != 1 || len(paths) != 2 {
				t.Errorf("executing requests, the manager keeps mutating %v, CRDs %v, validating %v; want its two configurations and the CRD", m.Targets.Mutating != nil, m.Targets.CRDs, paths)
			}
			continue
		}
		if m.Targets.Mutating != nil || len(m.Targets.CRDs) != 0 || len(paths) != 1 || paths[0] != admission.ValidatePolicyPath {
			t.Errorf("beside OpenKruise, the manager keeps mutating %v, CRDs %v, validating %v; want the policy webhook alone", m.Targets.Mutating != nil, m.Targets.CRDs, paths)
		}
	}
}
