package v1alpha1

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// ConditionsAnnotation carries, in v1alpha1, the hub's status.conditions
// when they say more than crr.apps.kruise.io/unready-acquired can, so that
// a round trip through v1alpha1 loses nothing.
const ConditionsAnnotation = "rejuv.dev/conditions"

// reasonUnreadyAcquired is the reason of a PreRecreateGrace condition made
// from OpenKruise's unready-acquired annotation.
const reasonUnreadyAcquired = "UnreadyAcquired"

// ConvertTo converts this ContainerRecreateRequest to the hub version.
func (crr *ContainerRecreateRequest) ConvertTo(dstRaw conversion.Hub) error {
	dst, ok := dstRaw.(*v1beta1.ContainerRecreateRequest)
	if !ok {
		return fmt.Errorf("convert ContainerRecreateRequest %s/%s to v1beta1: unexpected hub type %T", crr.Namespace, crr.Name, dstRaw)
	}
	dst.ObjectMeta = *crr.ObjectMeta.DeepCopy()
	dst.Spec = specToHub(crr.Spec)
	dst.Status = statusToHub(crr.Status)
	annotations := dst.Annotations
	if v, ok := annotations[v1beta1.SyncContainerStatusesAnnotation]; ok {
		var snapshot []v1beta1.ContainerRecreateRequestSyncContainerStatus
		if json.Unmarshal([]byte(v), &snapshot) == nil {
			dst.Status.ContainerStatusSnapshot = snapshot
			delete(annotations, v1beta1.SyncContainerStatusesAnnotation)
		}
	}
	if v, ok := annotations[v1beta1.PreStopStartedAnnotation]; ok {
		var started map[string]metav1.Time
		if json.Unmarshal([]byte(v), &started) == nil {
			for i := range dst.Status.ContainerRecreateStates {
				s := &dst.Status.ContainerRecreateStates[i]
				if t, ok := started[s.Name]; ok {
					s.PreStopStartedAt = &t
				}
			}
			delete(annotations, v1beta1.PreStopStartedAnnotation)
		}
	}
	if v := annotations[v1beta1.ResultAnnotation]; v != "" {
		dst.Status.Result = v1beta1.ContainerRecreateRequestResult(v)
		delete(annotations, v1beta1.ResultAnnotation)
	}
	if v, ok := annotations[ConditionsAnnotation]; ok {
		var conds []metav1.Condition
		if json.Unmarshal([]byte(v), &conds) == nil {
			dst.Status.Conditions = conds
			delete(annotations, ConditionsAnnotation)
			delete(annotations, v1beta1.UnreadyAcquiredAnnotation)
		}
	}
	if v, ok := annotations[v1beta1.UnreadyAcquiredAnnotation]; ok {
		if conds, ok := conditionsFromUnreadyAcquired(v); ok {
			dst.Status.Conditions = conds
			delete(annotations, v1beta1.UnreadyAcquiredAnnotation)
		}
	}
	if len(annotations) == 0 {
		dst.Annotations = nil
	}
	return nil
}

// ConvertFrom converts the hub version to this ContainerRecreateRequest.
func (crr *ContainerRecreateRequest) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*v1beta1.ContainerRecreateRequest)
	if !ok {
		return fmt.Errorf("convert ContainerRecreateRequest from v1beta1: unexpected hub type %T", srcRaw)
	}
	crr.ObjectMeta = *src.ObjectMeta.DeepCopy()
	// In v1beta1 an annotation of these names is an ordinary one, which
	// anyone who may patch the request may set; carried over, the next
	// v1alpha1 write would store it as status.
	for _, k := range StatusAnnotations() {
		delete(crr.Annotations, k)
	}
	crr.Spec = specFromHub(src.Spec)
	crr.Status = statusFromHub(src.Status)
	set := func(k, v string) {
		if crr.Annotations == nil {
			crr.Annotations = map[string]string{}
		}
		crr.Annotations[k] = v
	}
	if src.Status.Result != "" {
		set(v1beta1.ResultAnnotation, string(src.Status.Result))
	}
	started := map[string]metav1.Time{}
	for _, st := range src.Status.ContainerRecreateStates {
		if st.PreStopStartedAt != nil {
			started[st.Name] = *st.PreStopStartedAt
		}
	}
	if len(started) > 0 {
		b, err := marshalAnnotation(started)
		if err != nil {
			return fmt.Errorf("convert ContainerRecreateRequest %s/%s to v1alpha1: preStop start times: %w", src.Namespace, src.Name, err)
		}
		set(v1beta1.PreStopStartedAnnotation, string(b))
	}
	if src.Status.ContainerStatusSnapshot != nil {
		b, err := marshalAnnotation(src.Status.ContainerStatusSnapshot)
		if err != nil {
			return fmt.Errorf("convert ContainerRecreateRequest %s/%s to v1alpha1: container status snapshot: %w", src.Namespace, src.Name, err)
		}
		set(v1beta1.SyncContainerStatusesAnnotation, string(b))
	}
	if src.Status.Conditions != nil {
		unready := ""
		if c := meta.FindStatusCondition(src.Status.Conditions, v1beta1.ConditionPreRecreateGrace); c != nil && c.Status == metav1.ConditionTrue {
			unready = c.LastTransitionTime.UTC().Format(time.RFC3339)
			set(v1beta1.UnreadyAcquiredAnnotation, unready)
		}
		// The annotation alone says it all only for the condition it
		// would be read back as.
		if derived, ok := conditionsFromUnreadyAcquired(unready); !ok || !equality.Semantic.DeepEqual(derived, src.Status.Conditions) {
			b, err := marshalAnnotation(src.Status.Conditions)
			if err != nil {
				return fmt.Errorf("convert ContainerRecreateRequest %s/%s to v1alpha1: conditions: %w", src.Namespace, src.Name, err)
			}
			set(ConditionsAnnotation, string(b))
		}
	}
	return nil
}

// conditionsFromUnreadyAcquired reads OpenKruise's annotation, an RFC 3339
// time, as the hub's PreRecreateGrace condition.
func conditionsFromUnreadyAcquired(v string) ([]metav1.Condition, bool) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return nil, false
	}
	return []metav1.Condition{{
		Type:               v1beta1.ConditionPreRecreateGrace,
		Status:             metav1.ConditionTrue,
		Reason:             reasonUnreadyAcquired,
		LastTransitionTime: metav1.NewTime(t),
	}}, true
}

// marshalAnnotation writes v as an annotation's JSON value, without
// escaping HTML characters: the annotation is escaped once more when the
// object is written, and an escaped '<' would take six bytes, then seven.
func marshalAnnotation(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
