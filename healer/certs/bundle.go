package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Bundle is a CA and the serving certificate it signed, PEM encoded.
// CABundle is what clients trust: the current CA, plus the previous one
// while certificates it signed may still be served.
type Bundle struct {
	CACert, CAKey           []byte
	ServingCert, ServingKey []byte
	CABundle                []byte
}

// Validity periods.
const (
	DefaultCAValidity      = 10 * 365 * 24 * time.Hour
	DefaultServingValidity = 365 * 24 * time.Hour
	// DefaultRotateBefore renews a certificate this long before it expires.
	DefaultRotateBefore = 30 * 24 * time.Hour
)

// Lifetimes say how long certificates live and when they are renewed.
type Lifetimes struct {
	CA, Serving, RotateBefore time.Duration
}

// DefaultLifetimes are ten years for the CA, one for the serving
// certificate, renewed 30 days before expiry.
var DefaultLifetimes = Lifetimes{CA: DefaultCAValidity, Serving: DefaultServingValidity, RotateBefore: DefaultRotateBefore}

// NewBundle creates a CA and a serving certificate for hosts (DNS names or
// IP addresses).
func NewBundle(hosts []string, now time.Time, life Lifetimes) (*Bundle, error) {
	caCert, caKey, err := newCA(now, life.CA)
	if err != nil {
		return nil, err
	}
	b := &Bundle{CACert: caCert, CAKey: caKey, CABundle: caCert}
	if err := b.reissue(hosts, now, life); err != nil {
		return nil, err
	}
	return b, nil
}

// Renew returns the bundle to use at now: the same bundle when it is
// valid for hosts and not about to expire; a new serving certificate from the
// same CA when only that is due (so that clients' trust does not change); a
// new CA and certificate when the CA is due, with the old CA kept in the
// bundle clients trust. why says what was renewed, or is empty.
func (b *Bundle) Renew(hosts []string, now time.Time, life Lifetimes) (out *Bundle, why string, err error) {
	ca, caErr := parseCert(b.CACert)
	if caErr == nil {
		if _, err := tls.X509KeyPair(b.CACert, b.CAKey); err != nil {
			caErr = err
		}
	}
	if caErr != nil || now.Add(life.RotateBefore).After(ca.NotAfter) {
		fresh, err := NewBundle(hosts, now, life)
		if err != nil {
			return nil, "", err
		}
		if caErr == nil && now.Before(ca.NotAfter) {
			fresh.CABundle = append(append([]byte{}, fresh.CACert...), b.CACert...)
		}
		if caErr != nil {
			return fresh, fmt.Sprintf("new CA (the stored one is unusable: %v)", caErr), nil
		}
		return fresh, fmt.Sprintf("new CA (the old one expires %s)", ca.NotAfter.Format(time.RFC3339)), nil
	}
	if why := servingProblem(b, ca, hosts, now, life.RotateBefore); why != "" {
		out := *b
		if err := out.reissue(hosts, now, life); err != nil {
			return nil, "", err
		}
		return &out, "new serving certificate: " + why, nil
	}
	return b, "", nil
}

// servingProblem says why the serving certificate must be reissued, or "".
func servingProblem(b *Bundle, ca *x509.Certificate, hosts []string, now time.Time, rotateBefore time.Duration) string {
	if _, err := tls.X509KeyPair(b.ServingCert, b.ServingKey); err != nil {
		return fmt.Sprintf("unusable: %v", err)
	}
	cert, err := parseCert(b.ServingCert)
	if err != nil {
		return fmt.Sprintf("unusable: %v", err)
	}
	if err := cert.CheckSignatureFrom(ca); err != nil {
		return "not signed by the CA"
	}
	if now.Add(rotateBefore).After(cert.NotAfter) {
		return fmt.Sprintf("expires %s", cert.NotAfter.Format(time.RFC3339))
	}
	for _, h := range hosts {
		if err := cert.VerifyHostname(h); err != nil {
			return fmt.Sprintf("does not cover %s", h)
		}
	}
	return ""
}

func (b *Bundle) reissue(hosts []string, now time.Time, life Lifetimes) error {
	ca, err := tls.X509KeyPair(b.CACert, b.CAKey)
	if err != nil {
		return fmt.Errorf("issue serving certificate: load CA: %w", err)
	}
	caCert, err := parseCert(b.CACert)
	if err != nil {
		return fmt.Errorf("issue serving certificate: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return fmt.Errorf("issue serving certificate: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "rejuv-webhook"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(life.Serving),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	if len(hosts) > 0 {
		tmpl.Subject.CommonName = hosts[0]
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, key.Public(), ca.PrivateKey)
	if err != nil {
		return fmt.Errorf("issue serving certificate: %w", err)
	}
	keyPEM, err := encodeKey(key)
	if err != nil {
		return err
	}
	b.ServingCert = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	b.ServingKey = keyPEM
	return nil
}

func newCA(now time.Time, validity time.Duration) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("create CA: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: fmt.Sprintf("rejuv-webhook-ca@%d", now.Unix())},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("create CA: %w", err)
	}
	keyPEM, err = encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

func encodeKey(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encode key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), nil
}

func parseCert(p []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(p)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}

// serial is a random 127-bit serial number. crypto/rand's reader does not
// fail (it crashes the program instead since Go 1.24), so neither does this.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(fmt.Sprintf("read random serial number: %v", err))
	}
	return n
}
