package admission

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"slices"
)

// Callers are who the admission webhooks answer: clients that present a
// certificate signed by the CA the API server's webhook client certificate
// comes from (its AdmissionConfiguration's kubeconfig), with one of Names
// as its common name when Names is set. Anyone else is refused before the
// request is read: a forged review could otherwise learn another
// namespace's pod details from the request webhook's patch.
//
// The CRD conversion webhook answers everyone: the API server never
// presents a client certificate for conversions.
type Callers struct {
	// CA verifies the callers' certificates.
	CA *x509.CertPool
	// Names are the common names accepted; any signed by CA when empty.
	Names []string
}

// LoadCallers reads the CA bundle in caFile (PEM) that the API server's
// webhook client certificates chain to.
func LoadCallers(caFile string, names []string) (*Callers, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read the webhook client CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("read the webhook client CA %s: no PEM certificate in it", caFile)
	}
	return &Callers{CA: pool, Names: names}, nil
}

// TLS makes the webhook server ask for a client certificate and verify
// the one given, without requiring one at the handshake (the conversion
// webhook is served on the same port).
func (c *Callers) TLS(cfg *tls.Config) {
	cfg.ClientCAs = c.CA
	cfg.ClientAuth = tls.VerifyClientCertIfGiven
}

// admit answers with next only a caller that presented a verified
// certificate with an accepted name.
func (c *Callers) admit(next http.Handler) http.Handler {
	if c == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := c.refuse(r.TLS); why != "" {
			http.Error(w, why, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// refuse says why the connection's client is not a caller, or "".
func (c *Callers) refuse(state *tls.ConnectionState) string {
	if state == nil || len(state.VerifiedChains) == 0 || len(state.VerifiedChains[0]) == 0 {
		return "this webhook answers only the API server: present its webhook client certificate"
	}
	if cn := state.VerifiedChains[0][0].Subject.CommonName; len(c.Names) > 0 && !slices.Contains(c.Names, cn) {
		return fmt.Sprintf("this webhook answers only the API server: the client certificate's name %q is not one of --webhook-client-names", cn)
	}
	return ""
}
