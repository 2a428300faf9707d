package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// PodCache is the manager's cache of pods, which answers once Synced.
type PodCache struct {
	client.Reader
	Synced func() bool
}

// againstPod reads the request's pod, fills in what the request takes
// from it (fromPod) and checks the request against it. The pod comes from
// the cache when the cache holds one that admits the request: the cache may
// be a moment behind the API server, but a pod's containers, restart
// policy and node do not change once set, and the daemon tells the
// instance to stop by when it was created, not by the statusContext
// recorded here. A pod the cache lacks, a cached copy that would refuse
// the request, or one the cache keeps without some of its lifecycles or
// annotations (pods.Trimmed: the preStop the request copies may be among
// them), is read from the API server, whose answer alone refuses.
// The pod is nil when it does not exist.
func (m *CRRMutator) againstPod(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, namespace string) (*corev1.Pod, field.ErrorList, error) {
	key := types.NamespacedName{Namespace: namespace, Name: crr.Spec.PodName}
	if m.Cache != nil && m.Cache.Synced() {
		pod := &corev1.Pod{}
		if err := m.Cache.Get(ctx, key, pod); err == nil && !pods.Trimmed(pod) {
			filled := crr.DeepCopy()
			fromPod(filled, pod)
			if errs := validateAgainstPod(filled, namespace, pod); len(errs) == 0 {
				*crr = *filled
				return pod, nil, nil
			}
		}
	}
	pod := &corev1.Pod{}
	err := m.Reader.Get(ctx, key, pod)
	switch {
	case apierrors.IsNotFound(err):
		return nil, validateAgainstPod(crr, namespace, nil), nil
	case err != nil:
		return nil, nil, fmt.Errorf("read pod %s/%s: %w", namespace, crr.Spec.PodName, err)
	}
	fromPod(crr, pod)
	return pod, validateAgainstPod(crr, namespace, pod), nil
}
