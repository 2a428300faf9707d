package certs

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Keys of the Secret that stores the bundle. tls.crt and tls.key make it a
// valid kubernetes.io/tls Secret.
const (
	keyCACert   = "ca.crt"
	keyCAKey    = "ca.key"
	keyCABundle = "ca-bundle.crt"
	keyCert     = corev1.TLSCertKey
	keyKey      = corev1.TLSPrivateKeyKey
)

// DefaultCheckInterval is how often the Manager checks for renewal and that
// the CA bundle is still in place.
const DefaultCheckInterval = 10 * time.Minute

// Manager keeps the webhook server's certificates: in a Secret shared by
// the manager's replicas, in CertDir for the webhook server (which reloads
// them when they change), and the CA bundle in the webhook configurations
// and the CRD conversion webhook.
type Manager struct {
	// Client talks to the API server directly (no cache): Ensure runs
	// before the controller manager's caches start.
	Client client.Client
	// Secret is where the bundle is kept.
	Secret types.NamespacedName
	// Hosts are the names clients use to reach the webhook server.
	Hosts []string
	// CertDir receives tls.crt and tls.key.
	CertDir string
	// Targets receive the CA bundle.
	Targets Targets
	// Lifetimes default to DefaultLifetimes.
	Lifetimes     Lifetimes
	CheckInterval time.Duration
	Clock         clock.PassiveClock
}

// Secrets only in the manager's namespace.
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;create;update,namespace=system

// Ensure makes everything current once: the Secret holds a valid bundle for
// Hosts (created or renewed as needed), CertDir holds its serving
// certificate, and every target trusts its CA bundle.
func (m *Manager) Ensure(ctx context.Context) error {
	m.defaults()
	b, err := m.ensureSecret(ctx)
	if err != nil {
		return err
	}
	if err := m.writeFiles(b); err != nil {
		return err
	}
	return m.Targets.inject(ctx, m.Client, b.CABundle)
}

// Start renews and re-injects every CheckInterval until ctx ends; it
// implements manager.Runnable.
func (m *Manager) Start(ctx context.Context) error {
	m.defaults()
	log := ctrl.LoggerFrom(ctx).WithName("certs")
	t := time.NewTicker(m.CheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := m.Ensure(ctx); err != nil {
				log.Error(err, "keep webhook certificates current")
			}
		}
	}
}

// NeedLeaderElection is false: every replica serves webhooks and needs the
// certificate files.
func (m *Manager) NeedLeaderElection() bool { return false }

func (m *Manager) defaults() {
	if m.Lifetimes == (Lifetimes{}) {
		m.Lifetimes = DefaultLifetimes
	}
	if m.CheckInterval == 0 {
		m.CheckInterval = DefaultCheckInterval
	}
	if m.Clock == nil {
		m.Clock = clock.RealClock{}
	}
}

// ensureSecret loads the bundle, renews it when due, and stores it. A
// conflict with another replica doing the same is resolved by reading theirs.
func (m *Manager) ensureSecret(ctx context.Context) (*Bundle, error) {
	log := ctrl.LoggerFrom(ctx).WithName("certs")
	for range 3 {
		secret := &corev1.Secret{}
		err := m.Client.Get(ctx, m.Secret, secret)
		found := err == nil
		if err != nil && !apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("read webhook certificate Secret %s: %w", m.Secret, err)
		}
		stored := fromSecret(secret)
		b, why, err := stored.Renew(m.Hosts, m.Clock.Now(), m.Lifetimes)
		if err != nil {
			return nil, fmt.Errorf("renew webhook certificates in Secret %s: %w", m.Secret, err)
		}
		if found && why == "" {
			return b, nil
		}
		if !found {
			why = "none stored yet"
			secret = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: m.Secret.Namespace, Name: m.Secret.Name}, Type: corev1.SecretTypeTLS}
		}
		secret.Data = toSecretData(b)
		if found {
			err = m.Client.Update(ctx, secret)
		} else {
			err = m.Client.Create(ctx, secret)
		}
		switch {
		case err == nil:
			log.Info("stored new webhook certificates", "secret", m.Secret.String(), "why", why)
			return b, nil
		case apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err):
			continue
		default:
			return nil, fmt.Errorf("store webhook certificates in Secret %s: %w", m.Secret, err)
		}
	}
	return nil, fmt.Errorf("store webhook certificates in Secret %s: kept conflicting with another writer", m.Secret)
}

func fromSecret(s *corev1.Secret) *Bundle {
	return &Bundle{CACert: s.Data[keyCACert], CAKey: s.Data[keyCAKey], ServingCert: s.Data[keyCert], ServingKey: s.Data[keyKey], CABundle: s.Data[keyCABundle]}
}

func toSecretData(b *Bundle) map[string][]byte {
	return map[string][]byte{keyCACert: b.CACert, keyCAKey: b.CAKey, keyCert: b.ServingCert, keyKey: b.ServingKey, keyCABundle: b.CABundle}
}

// writeFiles puts the serving certificate where the webhook server reads
// it, each file replaced atomically and only when it changed.
func (m *Manager) writeFiles(b *Bundle) error {
	if err := os.MkdirAll(m.CertDir, 0o700); err != nil {
		return fmt.Errorf("write webhook certificates: %w", err)
	}
	for name, data := range map[string][]byte{keyCert: b.ServingCert, keyKey: b.ServingKey} {
		path := filepath.Join(m.CertDir, name)
		if cur, err := os.ReadFile(path); err == nil && string(cur) == string(data) {
			continue
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, data, 0o600); err != nil {
			return fmt.Errorf("write webhook certificate %s: %w", path, err)
		}
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("write webhook certificate %s: %w", path, err)
		}
	}
	return nil
}
