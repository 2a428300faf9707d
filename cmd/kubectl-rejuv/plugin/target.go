package plugin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/policyspec"
)

// target is what a command was pointed at: a pod, a workload, the pods
// of a label selector, a policy or a request.
type target struct {
	// kind is the lower-case kind (pod, deployment, statefulset,
	// daemonset, replicaset, recreatepolicy, containerrecreaterequest),
	// or selector.
	kind      string
	name      string
	namespace string

	pod     *corev1.Pod
	policy  *v1alpha1.RecreatePolicy
	request *v1beta1.ContainerRecreateRequest
	// selector chooses a workload's pods, or is the one given with -l.
	selector *metav1.LabelSelector
	// owner is the workload, for the owner reference of its restart
	// policy.
	owner *metav1.OwnerReference
	// maxUnavailable is the workload's own, for its restart.
	maxUnavailable *intstr.IntOrString
}

// String names the target as kubectl does: deployment/web, or
// -l app=web.
func (t *target) String() string {
	if t.kind == "selector" {
		return "pods with " + metav1.FormatLabelSelector(t.selector)
	}
	return t.kind + "/" + t.name
}

// resolveTarget reads what arg names: NAME (a pod) or TYPE/NAME; or, with
// no arg, the pods of selector.
func resolveTarget(ctx context.Context, cl *clients, arg, selector string, kinds ...string) (*target, error) {
	if selector != "" {
		if arg != "" {
			return nil, usageError("give a pod or TYPE/NAME, or a selector with -l, not both")
		}
		sel, err := metav1.ParseToLabelSelector(selector)
		if err != nil {
			return nil, usageError("-l %q: %v", selector, err)
		}
		return &target{kind: "selector", namespace: cl.namespace, selector: sel, maxUnavailable: new(intstr.FromString("25%"))}, nil
	}
	kind, name, found := strings.Cut(arg, "/")
	if !found {
		kind, name = "pod", arg
	}
	if name == "" {
		return nil, usageError("%q: name the object, as in deployment/web", arg)
	}
	gk, err := kindOf(cl, kind)
	if err != nil {
		return nil, err
	}
	t := &target{name: name, namespace: cl.namespace}
	var obj client.Object
	switch gk {
	case schema.GroupKind{Kind: "Pod"}:
		t.pod = &corev1.Pod{}
		obj = t.pod
	case schema.GroupKind{Group: "apps", Kind: "Deployment"}:
		obj = &appsv1.Deployment{}
	case schema.GroupKind{Group: "apps", Kind: "StatefulSet"}:
		obj = &appsv1.StatefulSet{}
	case schema.GroupKind{Group: "apps", Kind: "DaemonSet"}:
		obj = &appsv1.DaemonSet{}
	case schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}:
		obj = &appsv1.ReplicaSet{}
	case schema.GroupKind{Group: v1alpha1.GroupVersion.Group, Kind: "RecreatePolicy"}:
		t.policy = &v1alpha1.RecreatePolicy{}
		obj = t.policy
	case schema.GroupKind{Group: v1beta1.GroupVersion.Group, Kind: "ContainerRecreateRequest"}:
		t.request = &v1beta1.ContainerRecreateRequest{}
		obj = t.request
	default:
		return nil, usageError("%s is not something to point this command at; give %s", gk.Kind, strings.Join(kinds, ", "))
	}
	t.kind = strings.ToLower(gk.Kind)
	if !acceptsKind(kinds, t.kind) {
		return nil, usageError("%s is not something to point this command at; give %s", gk.Kind, strings.Join(kinds, ", "))
	}
	if err := cl.client.Get(ctx, types.NamespacedName{Namespace: cl.namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("no %s %s in namespace %s", t.kind, name, cl.namespace)
		}
		return nil, fmt.Errorf("read %s %s/%s: %w", t.kind, cl.namespace, name, err)
	}
	t.workload(obj)
	return t, nil
}

func acceptsKind(kinds []string, kind string) bool {
	for _, k := range kinds {
		if k == kind || (k == "workload" && workloadKinds[kind]) {
			return true
		}
	}
	return false
}

var workloadKinds = map[string]bool{"deployment": true, "statefulset": true, "daemonset": true, "replicaset": true}

// workload fills in a workload's selector, owner reference and own
// maxUnavailable.
func (t *target) workload(obj client.Object) {
	var sel *metav1.LabelSelector
	switch w := obj.(type) {
	case *appsv1.Deployment:
		sel = w.Spec.Selector
		t.maxUnavailable = new(intstr.FromString("25%"))
		if ru := w.Spec.Strategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
			t.maxUnavailable = ru.MaxUnavailable
		}
	case *appsv1.StatefulSet:
		sel = w.Spec.Selector
		t.maxUnavailable = new(intstr.FromInt32(1))
		if ru := w.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
			t.maxUnavailable = ru.MaxUnavailable
		}
	case *appsv1.DaemonSet:
		sel = w.Spec.Selector
		t.maxUnavailable = new(intstr.FromInt32(1))
		if ru := w.Spec.UpdateStrategy.RollingUpdate; ru != nil && ru.MaxUnavailable != nil {
			t.maxUnavailable = ru.MaxUnavailable
		}
	case *appsv1.ReplicaSet:
		sel = w.Spec.Selector
		t.maxUnavailable = new(intstr.FromString("25%"))
	default:
		return
	}
	t.selector = sel
	gvk := appsv1.SchemeGroupVersion.WithKind(obj.GetObjectKind().GroupVersionKind().Kind)
	if gvk.Kind == "" {
		gvk.Kind = kindNames[t.kind]
	}
	t.owner = &metav1.OwnerReference{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Name: obj.GetName(), UID: obj.GetUID()}
}

var kindNames = map[string]string{"deployment": "Deployment", "statefulset": "StatefulSet", "daemonset": "DaemonSet", "replicaset": "ReplicaSet"}

// kindOf maps what the user typed (deploy, deployments, sts,
// deployment.apps, rp, crr) to a kind, through the cluster's discovery.
func kindOf(cl *clients, typed string) (schema.GroupKind, error) {
	gvr, gr := schema.ParseResourceArg(strings.ToLower(typed))
	var candidates []schema.GroupVersionResource
	if gvr != nil {
		candidates = append(candidates, *gvr)
	}
	candidates = append(candidates, gr.WithVersion(""))
	var last error
	for _, c := range candidates {
		gvk, err := cl.mapper.KindFor(c)
		if err == nil {
			return gvk.GroupKind(), nil
		}
		last = err
	}
	return schema.GroupKind{}, usageError("%q is not a resource type this cluster knows: %v", typed, last)
}

// pods lists the running pods the target's selector chooses in its
// namespace, or the target's pod.
func (t *target) pods(ctx context.Context, cl *clients) ([]corev1.Pod, error) {
	if t.pod != nil {
		return []corev1.Pod{*t.pod}, nil
	}
	sel := t.selector
	if t.policy != nil {
		sel = &t.policy.Spec.Selector
	}
	if sel == nil {
		return nil, nil
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return nil, fmt.Errorf("selector of %s: %w", t, err)
	}
	list := &corev1.PodList{}
	if err := cl.client.List(ctx, list, client.InNamespace(t.namespace), client.MatchingLabelsSelector{Selector: s}); err != nil {
		return nil, fmt.Errorf("list the pods of %s: %w", t, err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if pods.Running(&p) {
			out = append(out, p)
		}
	}
	return out, nil
}

// restartPolicyName is the name of the policy that restarts a workload
// or the pods of a selector: restart-KIND-NAME, cut to fit a label value
// with a hash of what was cut.
func (t *target) restartPolicyName() string {
	if t.policy != nil {
		return t.policy.Name
	}
	full := "restart-" + t.kind + "-" + t.name
	if t.kind == "selector" {
		full = "restart-selector-" + hashOf(metav1.FormatLabelSelector(t.selector))
	}
	if len(full) <= 63 {
		return full
	}
	return strings.TrimRight(full[:63-9], "-.") + "-" + hashOf(full)
}

func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:8]
}

// policyContainers are the policy's container patterns.
func policyContainers(p *v1alpha1.RecreatePolicy) policyspec.Containers {
	return policyspec.Containers(p.Spec.Containers)
}
