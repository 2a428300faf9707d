package deploy

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/images"
)

// metricsGroupVersion is the resource metrics API metrics-server serves.
var metricsGroupVersion = schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}

// MetricsServer is metrics-server, built from its Go module, running in
// the cluster's kube-system as a Deployment behind the APIService
// v1beta1.metrics.k8s.io, as its own manifests install it.
type MetricsServer struct {
	Client client.Client
	// discovery asks the API server which resources it serves.
	discovery discovery.DiscoveryInterface
}

const (
	metricsServerName      = "metrics-server"
	metricsServerNamespace = metav1.NamespaceSystem
	metricsAPIService      = "v1beta1.metrics.k8s.io"
	// MetricResolution is how often metrics-server scrapes the kubelets:
	// its smallest allowed value, so that tests see samples soon.
	MetricResolution = 10 * time.Second
)

// InstallMetricsServer builds metrics-server (once, into the cache), loads
// its image onto the node, applies its objects with c and waits until the
// metrics API answers.
func InstallMetricsServer(ctx context.Context, cluster *harness.Cluster, c client.Client) (*MetricsServer, error) {
	bin, err := harness.EnsureMetricsServer(ctx)
	if err != nil {
		return nil, err
	}
	img := images.Image{Name: metricsServerName, Binary: bin, Repository: images.Registry + "/" + metricsServerName,
		Tag: filepath.Base(filepath.Dir(bin))}
	if _, err := cluster.BuildImage(ctx, img); err != nil {
		return nil, err
	}
	cfg, err := cluster.RESTConfig()
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("install metrics-server: discovery client: %w", err)
	}
	m := &MetricsServer{Client: c, discovery: dc}
	for _, o := range metricsServerObjects(img.Ref()) {
		if err := createOrReplace(ctx, c, o); err != nil {
			return nil, fmt.Errorf("install metrics-server: %w", err)
		}
	}
	if err := m.waitServing(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// Uninstall removes metrics-server and its APIService: the metrics API is
// no longer served.
func (m *MetricsServer) Uninstall(ctx context.Context) error {
	var errs []error
	for _, o := range metricsServerObjects("") {
		if err := m.Client.Delete(ctx, o); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s: %w", o.GetObjectKind().GroupVersionKind().Kind, o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// waitServing waits until the APIService is Available, the API server's
// discovery lists the metrics API (the aggregated discovery of a group is
// refreshed after its APIService becomes Available, and until then every
// client that discovers the server's resources fails on it as stale) and
// a list of pod metrics answers.
func (m *MetricsServer) waitServing(ctx context.Context) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		svc := apiService()
		if err := m.Client.Get(ctx, client.ObjectKeyFromObject(svc), svc); err != nil {
			last = err.Error()
			return false, nil
		}
		available := false
		conds, _, _ := unstructured.NestedSlice(svc.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["type"] == "Available" {
				last = fmt.Sprintf("APIService %s Available=%v: %v", metricsAPIService, cm["status"], cm["message"])
				available = cm["status"] == "True"
			}
		}
		if !available {
			return false, nil
		}
		if _, _, err := m.discovery.ServerGroupsAndResources(); err != nil {
			if failed := (*discovery.ErrGroupDiscoveryFailed)(nil); errors.As(err, &failed) {
				if gerr, ok := failed.Groups[metricsGroupVersion]; ok {
					last = fmt.Sprintf("discovery of %s: %v", metricsGroupVersion, gerr)
					return false, nil
				}
			} else {
				last = fmt.Sprintf("discovery: %v", err)
				return false, nil
			}
		}
		pods := &unstructured.UnstructuredList{}
		pods.SetGroupVersionKind(metricsGroupVersion.WithKind("PodMetricsList"))
		if err := m.Client.List(ctx, pods); err != nil {
			last = fmt.Sprintf("list pod metrics: %v", err)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for metrics-server to serve %s: %w (last: %s)", metricsAPIService, err, last)
	}
	return nil
}

func createOrReplace(ctx context.Context, c client.Client, o client.Object) error {
	err := c.Create(ctx, o)
	if !apierrors.IsAlreadyExists(err) {
		return err
	}
	current := o.DeepCopyObject().(client.Object)
	if err := c.Get(ctx, client.ObjectKeyFromObject(o), current); err != nil {
		return err
	}
	o.SetResourceVersion(current.GetResourceVersion())
	return c.Update(ctx, o)
}

func apiService() *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apiregistration.k8s.io/v1")
	u.SetKind("APIService")
	u.SetName(metricsAPIService)
	return u
}

// metricsServerObjects are what metrics-server's own manifests install,
// with the flags this cluster needs: the kubelet serves a certificate
// the harness signs for its address only (--kubelet-insecure-tls), and a
// short resolution.
func metricsServerObjects(image string) []client.Object {
	labels := map[string]string{"k8s-app": metricsServerName}
	sa := subjectsOf(metricsServerName, metricsServerNamespace)
	api := apiService()
	_ = unstructured.SetNestedMap(api.Object, map[string]any{
		"service":               map[string]any{"name": metricsServerName, "namespace": metricsServerNamespace},
		"group":                 "metrics.k8s.io",
		"version":               "v1beta1",
		"insecureSkipTLSVerify": true,
		"groupPriorityMinimum":  int64(100),
		"versionPriority":       int64(100),
	}, "spec")
	args := []string{
		"--cert-dir=/tmp", "--secure-port=10250",
		"--kubelet-preferred-address-types=InternalIP", "--kubelet-use-node-status-port", "--kubelet-insecure-tls",
		"--metric-resolution=" + MetricResolution.String(), "--kubelet-request-timeout=5s",
	}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Namespace: metricsServerNamespace}},
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:metrics-server"}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"nodes/metrics"}, Verbs: []string{"get"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "nodes"}, Verbs: []string{"get", "list", "watch"}},
		}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "system:metrics-server"}, Subjects: sa,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:metrics-server"}},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-server:system:auth-delegator"}, Subjects: sa,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"}},
		&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "metrics-server-auth-reader", Namespace: metricsServerNamespace}, Subjects: sa,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"}},
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Namespace: metricsServerNamespace, Labels: labels},
			Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "https", Port: 443, TargetPort: intstr.FromString("https")}}}},
		&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: metricsServerName, Namespace: metricsServerNamespace, Labels: labels},
			Spec: appsv1.DeploymentSpec{
				Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: labels},
					Spec: corev1.PodSpec{
						ServiceAccountName: metricsServerName,
						Containers: []corev1.Container{{
							Name: metricsServerName, Image: image, Args: args,
							Ports: []corev1.ContainerPort{{Name: "https", ContainerPort: 10250}},
							ReadinessProbe: &corev1.Probe{
								ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/readyz", Port: intstr.FromString("https"), Scheme: corev1.URISchemeHTTPS}},
								PeriodSeconds: 2,
							},
						}},
					},
				},
			}},
		api,
	}
}

func subjectsOf(name, namespace string) []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: namespace}}
}
