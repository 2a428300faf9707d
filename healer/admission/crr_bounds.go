package admission

import (
	"context"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// containerCountErrors refuses more containers than a request's status has
// room for (v1beta1.MaxRequestContainers).
func containerCountErrors(spec *v1beta1.ContainerRecreateRequestSpec) field.ErrorList {
	if n := len(spec.Containers); n > v1beta1.MaxRequestContainers {
		return field.ErrorList{field.TooMany(field.NewPath("spec", "containers"), n, v1beta1.MaxRequestContainers)}
	}
	return nil
}

// sizeErrors refuses a request whose part its author decides (all but its
// status, as JSON) is over v1beta1.MaxAdmittedRequestBytes, naming its
// largest part.
func sizeErrors(crr *v1beta1.ContainerRecreateRequest) field.ErrorList {
	total := admittedBytes(crr)
	if total <= v1beta1.MaxAdmittedRequestBytes {
		return nil
	}
	path, size := largestPart(crr)
	return field.ErrorList{field.Invalid(path, fmt.Sprintf("%d bytes", size),
		fmt.Sprintf("the request would take %d bytes without its status, more than the %d bytes a request may: requests are kept in the manager's and the daemons' memory, and a page of 500 must fit one conversion review",
			total, v1beta1.MaxAdmittedRequestBytes))}
}

// updateSizeErrors refuses an update over the bound only when it makes
// what the request's author decides larger: the API server's managed
// fields, which grow with each writer, are left out of the comparison, so
// that the manager's own updates (removing a label) always go through.
func updateSizeErrors(old, updated *v1beta1.ContainerRecreateRequest) field.ErrorList {
	authored := func(crr *v1beta1.ContainerRecreateRequest) int {
		part := *crr
		part.ManagedFields = nil
		return admittedBytes(&part)
	}
	if authored(updated) <= authored(old) {
		return nil
	}
	return sizeErrors(updated)
}

// admittedBytes is the size of the request without its status, as JSON.
func admittedBytes(crr *v1beta1.ContainerRecreateRequest) int {
	part := *crr
	part.Status = v1beta1.ContainerRecreateRequestStatus{}
	return jsonBytes(&part)
}

// largestPart names the part of a request that takes the most bytes: a
// metadata map or list, or one container of its spec (its preStop when
// that is most of it).
func largestPart(crr *v1beta1.ContainerRecreateRequest) (*field.Path, int) {
	meta := field.NewPath("metadata")
	parts := []struct {
		path  *field.Path
		value any
	}{
		{meta.Child("annotations"), crr.Annotations},
		{meta.Child("labels"), crr.Labels},
		{meta.Child("managedFields"), crr.ManagedFields},
		{meta.Child("ownerReferences"), crr.OwnerReferences},
		{meta.Child("finalizers"), crr.Finalizers},
	}
	for i, c := range crr.Spec.Containers {
		p := field.NewPath("spec", "containers").Index(i)
		if c.PreStop != nil && 2*jsonBytes(c.PreStop) > jsonBytes(c) {
			p = p.Child("preStop")
		}
		parts = append(parts, struct {
			path  *field.Path
			value any
		}{p, c})
	}
	var largest *field.Path
	most := -1
	for _, p := range parts {
		if n := jsonBytes(p.value); n > most {
			largest, most = p.path, n
		}
	}
	return largest, most
}

func jsonBytes(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0 // the request's own types always marshal
	}
	return len(b)
}

// activeRequestErrors refuses a request for a pod that has
// v1beta1.MaxActiveRequestsPerPod active requests already. The count comes
// from the manager's cache; once the cache counts half the bound, the
// count is read again from the API server, so that a cache a moment
// behind (a replica busy, a watch slow to deliver) cannot let a pod pass
// the bound. Requests created at the same instant may still pass it by a
// few: each is admitted before the others are stored.
func (m *CRRMutator) activeRequestErrors(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, namespace string) (field.ErrorList, error) {
	uid := crr.Labels[v1beta1.PodUIDLabel]
	if m.Requests == nil || uid == "" {
		return nil, nil
	}
	n, err := countActive(ctx, m.Requests, namespace, uid)
	if err != nil {
		return nil, fmt.Errorf("list the active requests of pod %s/%s: %w", namespace, crr.Spec.PodName, err)
	}
	if n >= v1beta1.MaxActiveRequestsPerPod/2 && m.Reader != nil {
		if n, err = countActive(ctx, m.Reader, namespace, uid); err != nil {
			return nil, fmt.Errorf("list the active requests of pod %s/%s from the API server: %w", namespace, crr.Spec.PodName, err)
		}
	}
	if n >= v1beta1.MaxActiveRequestsPerPod {
		return field.ErrorList{field.Forbidden(field.NewPath("spec", "podName"),
			fmt.Sprintf("pod %s has %d active ContainerRecreateRequests, the most a pod may have (%d): create this one once one of them completes",
				crr.Spec.PodName, n, v1beta1.MaxActiveRequestsPerPod))}, nil
	}
	return nil, nil
}

// countActive counts the active requests of the pod with uid in namespace
// as r sees them.
func countActive(ctx context.Context, r client.Reader, namespace, uid string) (int, error) {
	active := &v1beta1.ContainerRecreateRequestList{}
	if err := r.List(ctx, active, client.InNamespace(namespace), client.MatchingLabels{v1beta1.PodUIDLabel: uid, v1beta1.ActiveLabel: "true"}); err != nil {
		return 0, err
	}
	return len(active.Items), nil
}
