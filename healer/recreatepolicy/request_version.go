package recreatepolicy

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// RequestVersion is the version of the ContainerRecreateRequest API the
// controller creates, lists and watches its requests in. Whatever the
// version, the controller reasons about requests as v1beta1, the hub.
type RequestVersion string

const (
	// RequestsV1beta1 is for Rejuv executing the requests: the installed
	// CRD serves v1beta1 and stores it.
	RequestsV1beta1 RequestVersion = "v1beta1"
	// RequestsV1alpha1 is for OpenKruise executing the requests: its CRD
	// serves v1alpha1 alone.
	RequestsV1alpha1 RequestVersion = "v1alpha1"
)

// Object is an empty request of the version, to watch.
func (v RequestVersion) Object() client.Object {
	if v == RequestsV1alpha1 {
		return &appsv1alpha1.ContainerRecreateRequest{}
	}
	return &appsv1beta1.ContainerRecreateRequest{}
}

// list reads the requests of a namespace, as v1beta1.
func (v RequestVersion) list(ctx context.Context, c client.Reader, namespace string) ([]appsv1beta1.ContainerRecreateRequest, error) {
	if v != RequestsV1alpha1 {
		list := &appsv1beta1.ContainerRecreateRequestList{}
		if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
			return nil, fmt.Errorf("list the ContainerRecreateRequests of namespace %s: %w", namespace, err)
		}
		return list.Items, nil
	}
	list := &appsv1alpha1.ContainerRecreateRequestList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list the v1alpha1 ContainerRecreateRequests of namespace %s: %w", namespace, err)
	}
	out := make([]appsv1beta1.ContainerRecreateRequest, len(list.Items))
	for i := range list.Items {
		// Rejuv's own status annotations are not OpenKruise's: on its
		// requests they were written by whoever may patch them, not by
		// an executor, and must not pass for the request's status.
		for _, key := range []string{appsv1beta1.ResultAnnotation, appsv1alpha1.ConditionsAnnotation, appsv1beta1.PreStopStartedAnnotation} {
			delete(list.Items[i].Annotations, key)
		}
		if err := list.Items[i].ConvertTo(&out[i]); err != nil {
			return nil, err
		}
		// OpenKruise records no result: a completed request's containers
		// say how it went.
		if out[i].Status.Phase == appsv1beta1.PhaseCompleted && out[i].Status.Result == "" {
			out[i].Status.Result = appsv1beta1.ResultOf(out[i].Status.ContainerRecreateStates)
		}
	}
	return out, nil
}

// create writes a request in the version; crr becomes what the API
// server stored.
func (v RequestVersion) create(ctx context.Context, c client.Client, crr *appsv1beta1.ContainerRecreateRequest) error {
	if v != RequestsV1alpha1 {
		return c.Create(ctx, crr)
	}
	old := &appsv1alpha1.ContainerRecreateRequest{}
	if err := old.ConvertFrom(crr); err != nil {
		return err
	}
	if err := c.Create(ctx, old); err != nil {
		return err
	}
	return old.ConvertTo(crr)
}
