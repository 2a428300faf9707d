package pause

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// Switch reads the emergency stop from a reader, the manager's cache.
type Switch struct {
	Reader client.Reader
	// Namespace is the manager's.
	Namespace string
}

// Key is the ConfigMap's name.
func (s *Switch) Key() types.NamespacedName {
	return types.NamespacedName{Namespace: s.Namespace, Name: v1alpha1.PauseConfigMap}
}

// Read is the state now. A nil Switch is never paused. An error reading
// is returned: the caller decides whether to act without knowing.
func (s *Switch) Read(ctx context.Context) (State, error) {
	if s == nil {
		return State{}, nil
	}
	cm := &corev1.ConfigMap{}
	if err := s.Reader.Get(ctx, s.Key(), cm); err != nil {
		if apierrors.IsNotFound(err) {
			return State{}, nil
		}
		return State{}, fmt.Errorf("read the emergency stop, ConfigMap %s: %w", s.Key(), err)
	}
	return Of(cm), nil
}

// Predicate passes the events of the emergency stop's ConfigMap alone.
func (s *Switch) Predicate() predicate.Predicate {
	key := s.Key()
	return predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetNamespace() == key.Namespace && o.GetName() == key.Name
	})
}
