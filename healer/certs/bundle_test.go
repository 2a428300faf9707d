package certs

import (
	"bytes"
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

var testLife = Lifetimes{CA: 100 * 24 * time.Hour, Serving: 40 * 24 * time.Hour, RotateBefore: 10 * 24 * time.Hour}

func verify(t *testing.T, b *Bundle, host string, at time.Time) error {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b.CABundle) {
		t.Fatal("CA bundle holds no certificate")
	}
	cert, err := parseCert(b.ServingCert)
	if err != nil {
		t.Fatal(err)
	}
	_, err = cert.Verify(x509.VerifyOptions{Roots: pool, DNSName: host, CurrentTime: at})
	return err
}

func TestNewBundleServesHostsTrustedByCABundle(t *testing.T) {
	now := time.Now()
	b, err := NewBundle([]string{"rejuv-webhook.rejuv-system.svc", "127.0.0.1"}, now, testLife)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"rejuv-webhook.rejuv-system.svc", "127.0.0.1"} {
		if err := verify(t, b, h, now); err != nil {
			t.Errorf("serving certificate for %s: %v", h, err)
		}
	}
	if err := verify(t, b, "other.example", now); err == nil {
		t.Error("serving certificate verified for a host it was not made for")
	}
}

func TestRenew(t *testing.T) {
	hosts := []string{"svc.ns.svc"}
	start := time.Now()
	b, err := NewBundle(hosts, start, testLife)
	if err != nil {
		t.Fatal(err)
	}

	same, why, err := b.Renew(hosts, start.Add(24*time.Hour), testLife)
	if err != nil || why != "" || same != b {
		t.Fatalf("fresh bundle renewed (%q, %v)", why, err)
	}

	// 31 days on, the serving certificate (40 days) is within 10 days of expiry.
	at := start.Add(31 * 24 * time.Hour)
	r, why, err := b.Renew(hosts, at, testLife)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(why, "new serving certificate: expires") {
		t.Errorf("why = %q", why)
	}
	if !bytes.Equal(r.CACert, b.CACert) || !bytes.Equal(r.CABundle, b.CABundle) || bytes.Equal(r.ServingCert, b.ServingCert) {
		t.Error("a serving renewal changed the CA or kept the old certificate")
	}
	if err := verify(t, r, "svc.ns.svc", at.Add(20*24*time.Hour)); err != nil {
		t.Errorf("renewed certificate: %v", err)
	}

	// A new host needs a new serving certificate.
	r, why, err = b.Renew([]string{"svc.ns.svc", "10.0.0.1"}, start, testLife)
	if err != nil || why != "new serving certificate: does not cover 10.0.0.1" {
		t.Fatalf("renew for a new host: %q, %v", why, err)
	}
	if err := verify(t, r, "10.0.0.1", start); err != nil {
		t.Error(err)
	}

	// 91 days on, the CA (100 days) is due: new CA, old one still trusted.
	at = start.Add(91 * 24 * time.Hour)
	r, why, err = b.Renew(hosts, at, testLife)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(why, "new CA") || bytes.Equal(r.CACert, b.CACert) {
		t.Fatalf("CA renewal: %q", why)
	}
	if !bytes.Contains(r.CABundle, b.CACert) || !bytes.Contains(r.CABundle, r.CACert) {
		t.Error("the CA bundle must trust the new and the old CA during the switch")
	}
	if err := verify(t, r, "svc.ns.svc", at); err != nil {
		t.Error(err)
	}
}

func TestRenewReplacesUnusableBundle(t *testing.T) {
	b := &Bundle{CACert: []byte("garbage"), CAKey: []byte("garbage")}
	r, why, err := b.Renew([]string{"h"}, time.Now(), testLife)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(why, "the stored one is unusable") {
		t.Errorf("why = %q", why)
	}
	if err := verify(t, r, "h", time.Now()); err != nil {
		t.Error(err)
	}
}
