package admission

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/rejuv"
)

// testCA signs client certificates for the callers test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, cn string) testCA {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true, IsCA: true,
	}
	der, key := sign(t, tmpl, nil, nil)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{cert: cert, key: key}
}

// client signs a client certificate named cn.
func (ca testCA) client(t *testing.T, cn string) tls.Certificate {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, key := sign(t, tmpl, ca.cert, ca.key)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// sign makes a key and a certificate of tmpl for it, signed by parent
// (self-signed when nil).
func sign(t *testing.T, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return der, key
}

// TestOnlyTheAPIServerIsAnswered: with a webhook client CA, the admission
// webhooks answer only a client whose certificate it signed (with an
// accepted name), before reading the request; the conversion webhook,
// which the API server calls without a certificate, answers anyone, and
// bounds the body it decodes.
func TestOnlyTheAPIServerIsAnswered(t *testing.T) {
	apiserverCA := newTestCA(t, "webhook-client-ca")
	caFile := filepath.Join(t.TempDir(), "ca.crt")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: apiserverCA.cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	callers, err := LoadCallers(caFile, []string{"kube-apiserver-webhook-client"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCallers(filepath.Join(t.TempDir(), "none.crt"), nil); err == nil || !strings.Contains(err.Error(), "read the webhook client CA") {
		t.Errorf("a missing CA file: got %v, want an error naming the webhook client CA", err)
	}

	server := webhook.NewServer(webhook.Options{})
	sch, err := apps.NewScheme()
	if err == nil {
		err = rejuv.AddToScheme(sch)
	}
	if err != nil {
		t.Fatal(err)
	}
	Register(server, sch, Options{Callers: callers})
	ts := httptest.NewUnstartedServer(server.WebhookMux())
	ts.TLS = &tls.Config{}
	callers.TLS(ts.TLS)
	ts.StartTLS()
	defer ts.Close()

	// A review of a pod in another namespace: the request webhook would
	// answer it with that pod's details.
	review, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  &admissionv1.AdmissionRequest{UID: "forged", Namespace: "other", Operation: admissionv1.Create},
	})
	if err != nil {
		t.Fatal(err)
	}
	post := func(cert *tls.Certificate, path string, body []byte) (int, string, error) {
		tr := ts.Client().Transport.(*http.Transport).Clone()
		if cert != nil {
			tr.TLSClientConfig.Certificates = []tls.Certificate{*cert}
		}
		resp, err := (&http.Client{Transport: tr}).Post(ts.URL+path, "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(out), nil
	}

	apiserver := apiserverCA.client(t, "kube-apiserver-webhook-client")
	otherName := apiserverCA.client(t, "rejuv-harness-admin")
	otherCA := newTestCA(t, "someone-else").client(t, "kube-apiserver-webhook-client")
	for _, path := range []string{MutateCRRPath, ValidateCRRPath, PodReadinessGatePath, PolicyReadinessGatePath, ValidatePolicyPath} {
		code, body, err := post(nil, path, review)
		if err != nil || code != http.StatusForbidden || !strings.Contains(body, "answers only the API server") {
			t.Errorf("%s without a client certificate: got %d %q %v, want 403 saying it answers only the API server", path, code, body, err)
		}
		code, body, err = post(&otherName, path, review)
		if err != nil || code != http.StatusForbidden || !strings.Contains(body, `"rejuv-harness-admin" is not one of --webhook-client-names`) {
			t.Errorf("%s with a certificate of the CA for another name: got %d %q %v, want 403 naming it", path, code, body, err)
		}
		// Go's client does not offer a certificate the server's CA list
		// does not name; others fail the handshake.
		if code, body, err := post(&otherCA, path, review); err == nil && code != http.StatusForbidden {
			t.Errorf("%s with a certificate of another CA: got %d %q, want it refused", path, code, body)
		}
		code, body, err = post(&apiserver, path, review)
		if err != nil || code != http.StatusOK || !strings.Contains(body, `"uid":"forged"`) {
			t.Errorf("%s with the API server's certificate: got %d %q %v, want the review answered", path, code, body, err)
		}
	}

	conversion := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"c","desiredAPIVersion":"apps.kruise.io/v1alpha1","objects":[]}}`
	code, body, err := post(nil, ConvertPath, []byte(conversion))
	if err != nil || code != http.StatusOK || !strings.Contains(body, `"uid":"c"`) {
		t.Errorf("a conversion without a client certificate: got %d %q %v, want it answered", code, body, err)
	}
	huge := append([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"big","desiredAPIVersion":"apps.kruise.io/v1alpha1","objects":[{"x":"`),
		bytes.Repeat([]byte("a"), MaxConversionBytes)...)
	huge = append(huge, `"}]}}`...)
	code, body, err = post(nil, ConvertPath, huge)
	if err == nil && (code != http.StatusRequestEntityTooLarge || !strings.Contains(body, fmt.Sprintf("more than the %d bytes", MaxConversionBytes))) {
		t.Errorf("a conversion review of %d bytes: got %d %q, want it refused unread (413 naming the bound, or the connection closed)", len(huge), code, body)
	}
}
