package deploy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// MetricsReaderRole is the shipped ClusterRole that lets a scraper read
// the manager's and the daemons' metrics.
const MetricsReaderRole = "rejuv-metrics-reader"

// scraper is a ServiceAccount bound to the metrics reader role, as an
// operator sets one up for Prometheus, and its token.
type scraper struct {
	name, namespace string
	token           string
}

const scraperName = "rejuv-e2e-scraper"

func newScraper(ctx context.Context, kube kubernetes.Interface) (*scraper, error) {
	s := &scraper{name: scraperName, namespace: metav1.NamespaceDefault}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.namespace}}
	if _, err := kube.CoreV1().ServiceAccounts(s.namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("create the scraper's ServiceAccount: %w", err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: s.name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: MetricsReaderRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: s.name, Namespace: s.namespace}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("bind the scraper to %s: %w", MetricsReaderRole, err)
	}
	token, err := ServiceAccountToken(ctx, kube, s.namespace, s.name)
	if err != nil {
		return nil, err
	}
	s.token = token
	return s, nil
}

func (s *scraper) remove(ctx context.Context, kube kubernetes.Interface) error {
	var errs []error
	if err := kube.RbacV1().ClusterRoleBindings().Delete(ctx, s.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	if err := kube.CoreV1().ServiceAccounts(s.namespace).Delete(ctx, s.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ServiceAccountToken requests a short-lived token of a ServiceAccount.
func ServiceAccountToken(ctx context.Context, kube kubernetes.Interface, namespace, name string) (string, error) {
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))}}
	tr, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, req, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("request a token of %s/%s: %w", namespace, name, err)
	}
	return tr.Status.Token, nil
}

// ScraperToken is the token of a ServiceAccount bound to the metrics
// reader role, as an operator sets one up for Prometheus; the first call
// creates it, Uninstall removes it.
func (s *Stack) ScraperToken(ctx context.Context) (string, error) {
	s.scraperMu.Lock()
	defer s.scraperMu.Unlock()
	if s.scraper == nil {
		sc, err := newScraper(ctx, s.Kube)
		if err != nil {
			return "", err
		}
		s.scraper = sc
	}
	return s.scraper.token, nil
}

// Metrics scrapes a pod of the stack (the manager's or a daemon's) at its
// metrics port, as a scraper bound to the metrics reader role does.
func (s *Stack) Metrics(ctx context.Context, pod *corev1.Pod) (string, error) {
	token, err := s.ScraperToken(ctx)
	if err != nil {
		return "", err
	}
	code, body, err := Scrape(ctx, "https://"+pod.Status.PodIP+":8443/metrics", token)
	if err != nil {
		return "", err
	}
	if code != http.StatusOK {
		return "", fmt.Errorf("scrape %s: %d %s", pod.Name, code, body)
	}
	return body, nil
}

// Scrape GETs a metrics URL with a bearer token (none when empty) and
// returns the status and body. The endpoints serve self-signed
// certificates, which a scraper is configured to accept.
func Scrape(ctx context.Context, url, token string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the endpoints' certificates are self-signed
	}}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("scrape %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}
