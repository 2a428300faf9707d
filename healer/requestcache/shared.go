package requestcache

import (
	"encoding/json"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	appsv1alpha1 "github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/intern"
)

// sharedValues are the tables of what requests hold alike.
type sharedValues struct {
	intern.Values
	strategies        intern.Table[*appsv1beta1.ContainerRecreateRequestStrategy]
	strategiesV1alpha intern.Table[*appsv1alpha1.ContainerRecreateRequestStrategy]
	hooks             intern.Table[*appsv1beta1.ProbeHandler]
	ports             intern.Table[[]corev1.ContainerPort]
	seconds           intern.Table[*int64]
	ttls              intern.Table[*int32]
}

// alike are the labels and annotations whose values the requests of one
// policy, run or node hold alike; the others (the pod's name and UID, the
// time of admission, a request's own notes) are each request's own.
var alike = map[string]bool{
	appsv1beta1.PolicyLabel: true, appsv1beta1.TriggerLabel: true, appsv1beta1.SourceLabel: true,
	appsv1beta1.NodeNameLabel: true, appsv1beta1.ActiveLabel: true,
	appsv1beta1.RunAnnotation: true, appsv1beta1.ReasonAnnotation: true, appsv1beta1.ContainersAnnotation: true,
	appsv1beta1.DisruptionChargedAnnotation: true, appsv1beta1.ResultAnnotation: true,
}

func isAlike(key string) bool { return alike[key] }

// meta shares what a request's metadata holds alike with others, and drops
// its managedFields.
func (s *sharedValues) meta(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	m.Namespace = s.String(m.Namespace)
	m.GenerateName = s.String(m.GenerateName)
	m.Labels = s.Keys(m.Labels, isAlike)
	m.Annotations = s.Keys(m.Annotations, isAlike)
	m.OwnerReferences = s.Owners(m.OwnerReferences)
	for i, f := range m.Finalizers {
		m.Finalizers[i] = s.String(f)
	}
}

// request shares what a v1beta1 request holds alike with others.
func (s *sharedValues) request(crr *appsv1beta1.ContainerRecreateRequest) {
	s.meta(&crr.ObjectMeta)
	crr.APIVersion, crr.Kind = s.String(crr.APIVersion), s.String(crr.Kind)
	spec := &crr.Spec
	spec.Strategy = share(&s.strategies, spec.Strategy)
	spec.ActiveDeadlineSeconds = shareNumber(&s.seconds, spec.ActiveDeadlineSeconds)
	spec.TTLSecondsAfterFinished = shareNumber(&s.ttls, spec.TTLSecondsAfterFinished)
	for i := range spec.Containers {
		c := &spec.Containers[i]
		c.Name = s.String(c.Name)
		c.PreStop = share(&s.hooks, c.PreStop)
		c.Ports = shareList(&s.ports, c.Ports)
	}
	st := &crr.Status
	st.Message = s.String(st.Message)
	for i := range st.Conditions {
		c := &st.Conditions[i]
		c.Type, c.Reason, c.Message = s.String(c.Type), s.String(c.Reason), s.String(c.Message)
	}
	for i := range st.ContainerRecreateStates {
		c := &st.ContainerRecreateStates[i]
		c.Name, c.Message = s.String(c.Name), s.String(c.Message)
	}
	for i := range st.ContainerStatusSnapshot {
		st.ContainerStatusSnapshot[i].Name = s.String(st.ContainerStatusSnapshot[i].Name)
	}
}

// requestV1alpha1 shares what a v1alpha1 request holds alike with others:
// OpenKruise's requests, whose status the manager reads from their
// annotations.
func (s *sharedValues) requestV1alpha1(crr *appsv1alpha1.ContainerRecreateRequest) {
	s.meta(&crr.ObjectMeta)
	crr.APIVersion, crr.Kind = s.String(crr.APIVersion), s.String(crr.Kind)
	crr.Spec.Strategy = share(&s.strategiesV1alpha, crr.Spec.Strategy)
	for i := range crr.Spec.Containers {
		crr.Spec.Containers[i].Name = s.String(crr.Spec.Containers[i].Name)
	}
}

// share is the one copy of *v kept for all alike, by its JSON.
func share[V any](t *intern.Table[*V], v *V) *V {
	if v == nil {
		return nil
	}
	key, err := json.Marshal(v)
	if err != nil {
		return v
	}
	return t.Share(string(key), v)
}

// shareList is the one copy of the list kept for all alike, by its JSON.
func shareList[V any](t *intern.Table[[]V], list []V) []V {
	if len(list) == 0 {
		return list
	}
	key, err := json.Marshal(list)
	if err != nil {
		return list
	}
	return t.Share(string(key), list)
}

// shareNumber is the one pointer kept for all alike to the same number.
func shareNumber[N int32 | int64](t *intern.Table[*N], v *N) *N {
	if v == nil {
		return nil
	}
	return t.Share(strconv.FormatInt(int64(*v), 10), v)
}
