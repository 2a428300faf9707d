package harness

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certAuthority signs the cluster's certificates.
type certAuthority struct {
	cert *x509.Certificate
	key  crypto.Signer
}

// certRequest describes one leaf certificate.
type certRequest struct {
	file   string // base name: FILE.crt and FILE.key
	cn     string
	orgs   []string
	ips    []net.IP
	dns    []string
	server bool
	client bool
}

const certValidity = 365 * 24 * time.Hour

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func serial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

// newCA creates a self-signed CA and writes NAME.crt and NAME.key into dir.
func newCA(dir, name, cn string) (*certAuthority, error) {
	key, err := newKey()
	if err != nil {
		return nil, fmt.Errorf("create CA %s: %w", name, err)
	}
	sn, err := serial()
	if err != nil {
		return nil, fmt.Errorf("create CA %s: %w", name, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          sn,
		Subject:               pkix.Name{CommonName: cn},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("create CA %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("create CA %s: %w", name, err)
	}
	if err := writeCertAndKey(dir, name, der, key); err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key}, nil
}

// issue signs a leaf certificate and writes FILE.crt and FILE.key into dir.
func (ca *certAuthority) issue(dir string, r certRequest) error {
	key, err := newKey()
	if err != nil {
		return fmt.Errorf("issue certificate %s: %w", r.file, err)
	}
	sn, err := serial()
	if err != nil {
		return fmt.Errorf("issue certificate %s: %w", r.file, err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: r.cn, Organization: r.orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		IPAddresses:  r.ips,
		DNSNames:     r.dns,
	}
	if r.server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	if r.client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		return fmt.Errorf("issue certificate %s: %w", r.file, err)
	}
	return writeCertAndKey(dir, r.file, der, key)
}

func writeCertAndKey(dir, name string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("write %s.key: %w", name, err)
	}
	if err := writePEM(filepath.Join(dir, name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, name+".key"), "EC PRIVATE KEY", keyDER)
}

func writePEM(path, typ string, der []byte) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeServiceAccountKeys writes the key pair that signs service account
// tokens: sa.key (private) and sa.pub (public).
func writeServiceAccountKeys(dir string) error {
	key, err := newKey()
	if err != nil {
		return fmt.Errorf("create service account key: %w", err)
	}
	priv, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("create service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("create service account key: %w", err)
	}
	if err := writePEM(filepath.Join(dir, "sa.key"), "EC PRIVATE KEY", priv); err != nil {
		return err
	}
	return writePEM(filepath.Join(dir, "sa.pub"), "PUBLIC KEY", pub)
}

// writePKI creates every certificate the cluster needs in dir.
func writePKI(cfg Config, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create PKI directory: %w", err)
	}
	ca, err := newCA(dir, "ca", "rejuv-harness-ca")
	if err != nil {
		return err
	}
	frontProxy, err := newCA(dir, "front-proxy-ca", "rejuv-harness-front-proxy-ca")
	if err != nil {
		return err
	}
	nodeIP := net.IP(cfg.NodeIP().AsSlice())
	serviceIP := net.IP(cfg.ServiceSubnet.Addr().Next().AsSlice())
	loopback := net.ParseIP("127.0.0.1")
	leaves := []certRequest{
		{file: "apiserver", cn: "kube-apiserver", server: true,
			ips: []net.IP{nodeIP, serviceIP, loopback},
			dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}},
		{file: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", orgs: []string{"system:masters"}, client: true},
		{file: "admin", cn: "rejuv-harness-admin", orgs: []string{"system:masters"}, client: true},
		{file: "controller-manager", cn: "system:kube-controller-manager", client: true},
		{file: "scheduler", cn: "system:kube-scheduler", client: true},
		{file: "kube-proxy", cn: "system:kube-proxy", client: true},
	}
	for _, n := range cfg.Nodes() {
		leaves = append(leaves,
			certRequest{file: n.kubeletClientCert(), cn: "system:node:" + n.Name, orgs: []string{"system:nodes"}, client: true},
			certRequest{file: n.kubeletCert(), cn: n.Name, server: true, ips: []net.IP{net.IP(n.IP.AsSlice())}, dns: []string{n.Name}})
	}
	for _, r := range leaves {
		if err := ca.issue(dir, r); err != nil {
			return err
		}
	}
	if err := frontProxy.issue(dir, certRequest{file: "front-proxy-client", cn: "front-proxy-client", client: true}); err != nil {
		return err
	}
	if err := writeWebhookClientPKI(dir); err != nil {
		return err
	}
	return writeServiceAccountKeys(dir)
}
