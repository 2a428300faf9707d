package kube

import (
	"context"
	"encoding/json"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// Client reaches the API server for what the daemon does.
type Client struct {
	core, requests, events, authn, authz rest.Interface
}

// newScheme holds the daemon's types.
func newScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		corev1.AddToScheme, v1beta1.AddToScheme, eventsv1.AddToScheme, authenticationv1.AddToScheme, authorizationv1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// New returns a Client for cfg.
func New(cfg *rest.Config) (*Client, error) {
	s, err := newScheme()
	if err != nil {
		return nil, fmt.Errorf("build the scheme: %w", err)
	}
	codecs := serializer.NewCodecFactory(s).WithoutConversion()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("build the HTTP client: %w", err)
	}
	restFor := func(gv schema.GroupVersion, apiPath string) (rest.Interface, error) {
		c := rest.CopyConfig(cfg)
		c.GroupVersion, c.APIPath, c.NegotiatedSerializer = &gv, apiPath, codecs
		if c.UserAgent == "" {
			c.UserAgent = "rejuv-daemon"
		}
		return rest.RESTClientForConfigAndClient(c, httpClient)
	}
	out := &Client{}
	for _, x := range []struct {
		into    *rest.Interface
		gv      schema.GroupVersion
		apiPath string
	}{
		{&out.core, corev1.SchemeGroupVersion, "/api"},
		{&out.requests, v1beta1.GroupVersion, "/apis"},
		{&out.events, eventsv1.SchemeGroupVersion, "/apis"},
		{&out.authn, authenticationv1.SchemeGroupVersion, "/apis"},
		{&out.authz, authorizationv1.SchemeGroupVersion, "/apis"},
	} {
		if *x.into, err = restFor(x.gv, x.apiPath); err != nil {
			return nil, fmt.Errorf("client for %s: %w", x.gv, err)
		}
	}
	return out, nil
}

// UpdateRequestStatus writes the status of crr with its resourceVersion and
// returns the stored object.
func (c *Client) UpdateRequestStatus(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) (*v1beta1.ContainerRecreateRequest, error) {
	out := &v1beta1.ContainerRecreateRequest{}
	err := c.requests.Put().Namespace(crr.Namespace).Resource("containerrecreaterequests").Name(crr.Name).SubResource("status").
		Body(crr).Do(ctx).Into(out)
	return out, err
}

// GetPod reads a pod from the API server.
func (c *Client) GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	out := &corev1.Pod{}
	err := c.core.Get().Namespace(namespace).Resource("pods").Name(name).Do(ctx).Into(out)
	return out, err
}

// CreateEvent records an event.
func (c *Client) CreateEvent(ctx context.Context, e *eventsv1.Event) error {
	return c.events.Post().Namespace(e.Namespace).Resource("events").Body(e).Do(ctx).Error()
}

// ReviewToken asks the API server who a bearer token is.
func (c *Client) ReviewToken(ctx context.Context, tr *authenticationv1.TokenReview) (*authenticationv1.TokenReview, error) {
	out := &authenticationv1.TokenReview{}
	err := c.authn.Post().Resource("tokenreviews").Body(tr).Do(ctx).Into(out)
	return out, err
}

// ReviewAccess asks the API server whether a user may do something.
func (c *Client) ReviewAccess(ctx context.Context, sar *authorizationv1.SubjectAccessReview) (*authorizationv1.SubjectAccessReview, error) {
	out := &authorizationv1.SubjectAccessReview{}
	err := c.authz.Post().Resource("subjectaccessreviews").Body(sar).Do(ctx).Into(out)
	return out, err
}

// CheckServed reports, in words a user can act on, when the API server
// does not serve ContainerRecreateRequests (Rejuv's CRDs not installed).
func (c *Client) CheckServed(ctx context.Context) error {
	path := "/apis/" + v1beta1.GroupVersion.String()
	raw, err := c.requests.Get().AbsPath(path).Do(ctx).Raw()
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("the API server does not serve %s: install Rejuv's CustomResourceDefinitions (config/crd) first", v1beta1.GroupVersion)
		}
		return fmt.Errorf("ask the API server for %s: %w", path, err)
	}
	list := &metav1.APIResourceList{}
	if err := json.Unmarshal(raw, list); err != nil {
		return fmt.Errorf("read the resources of %s: %w", path, err)
	}
	for _, r := range list.APIResources {
		if r.Name == "containerrecreaterequests/status" {
			return nil
		}
	}
	return fmt.Errorf("the API server serves %s without containerrecreaterequests/status: install Rejuv's CustomResourceDefinitions (config/crd)", v1beta1.GroupVersion)
}
