package pause

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// Stop is the emergency stop as a client writes it: kubectl rejuv pause
// --all, and the preparation of an uninstall.
type Stop struct {
	// Namespace is the manager's.
	Namespace string
	// Reason is quoted in every policy's status and every refusal.
	Reason string
	// EndRequests ends the requests a daemon has begun too.
	EndRequests bool
	// Owner, when set, owns the ConfigMap: the stop is deleted with it. An
	// uninstall's stop is owned by the manager's ServiceAccount, which the
	// uninstall deletes after the CRDs, so that it does not outlive the
	// installation into a reinstall.
	Owner *metav1.OwnerReference
}

// Key is the stop's ConfigMap.
func (s Stop) Key() client.ObjectKey {
	return client.ObjectKey{Namespace: s.Namespace, Name: v1alpha1.PauseConfigMap}
}

// Data is what the ConfigMap holds.
func (s Stop) Data() map[string]string {
	requests := v1alpha1.PauseFinish
	if s.EndRequests {
		requests = v1alpha1.PauseEnd
	}
	return map[string]string{v1alpha1.PauseReasonKey: s.Reason, v1alpha1.PauseRequestsKey: requests}
}

// Write creates the stop's ConfigMap, or gives the one there the stop's
// data (and owner): a second pause replaces the first's reason and what
// becomes of the requests begun. It returns the digest the manager's
// leader confirms the data with (v1alpha1.PauseObservedAnnotation).
func Write(ctx context.Context, c client.Client, s Stop) (digest string, err error) {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: v1alpha1.PauseConfigMap,
			Labels: map[string]string{"app.kubernetes.io/part-of": "rejuv"}},
		Data: s.Data(),
	}
	if s.Owner != nil {
		cm.OwnerReferences = []metav1.OwnerReference{*s.Owner}
	}
	err = c.Create(ctx, cm)
	if apierrors.IsAlreadyExists(err) {
		cur := &corev1.ConfigMap{}
		if err = c.Get(ctx, s.Key(), cur); err == nil {
			cur.Data = cm.Data
			if s.Owner != nil && !slices.ContainsFunc(cur.OwnerReferences, func(o metav1.OwnerReference) bool { return o.UID == s.Owner.UID }) {
				cur.OwnerReferences = append(cur.OwnerReferences, *s.Owner)
			}
			err = c.Update(ctx, cur)
		}
	}
	if apierrors.IsNotFound(err) {
		return "", fmt.Errorf("write the emergency stop, ConfigMap %s: namespace %s not found: it must be the namespace Rejuv's manager runs in", s.Key(), s.Namespace)
	}
	if err != nil {
		return "", fmt.Errorf("write the emergency stop, ConfigMap %s: %w", s.Key(), err)
	}
	return v1alpha1.PauseDigest(cm.Data), nil
}

// Observed is whether the manager's leader has confirmed that it acts on
// the data of digest: its controllers hold every policy and have ended
// the requests the stop ends.
func Observed(ctx context.Context, c client.Reader, key client.ObjectKey, digest string) (bool, error) {
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, key, cm); err != nil {
		return false, fmt.Errorf("read the emergency stop, ConfigMap %s: %w", key, err)
	}
	return cm.Annotations[v1alpha1.PauseObservedAnnotation] == digest, nil
}
