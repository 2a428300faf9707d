package invariant

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// A policy is what the checker keeps of one RecreatePolicy.
type policy struct {
	uid             types.UID
	namespace, name string
	// obj is the policy as last seen.
	obj *v1alpha1.RecreatePolicy
	// generation is the spec generation the selection was made for.
	generation int64
	selector   labels.Selector
	// selected are the pods of its namespace it selects; disrupted those
	// of them it keeps unavailable, with the request that does.
	selected  map[types.UID]bool
	disrupted map[types.UID]*request
	episode   *budgetEpisode
}

// subject names the policy in a violation.
func (pol *policy) subject() string { return "policy " + pol.namespace + "/" + pol.name }

// policySeen applies a policy's watch event: a changed spec selects its
// pods again; a completed run is checked.
func (c *Checker) policySeen(o PolicySeen) {
	obj := o.Policy
	if obj == nil {
		return
	}
	pol := c.policies[obj.UID]
	if o.Gone {
		if pol != nil {
			c.endBudgetEpisode(pol, o.At)
			delete(c.namespace(pol.namespace).policies, pol.uid)
			delete(c.policies, pol.uid)
		}
		return
	}
	fresh := pol == nil
	if fresh {
		pol = &policy{uid: obj.UID, namespace: obj.Namespace, name: obj.Name,
			selected: map[types.UID]bool{}, disrupted: map[types.UID]*request{}}
		c.policies[pol.uid] = pol
		c.namespace(pol.namespace).policies[pol.uid] = pol
	}
	pol.obj = obj
	if fresh || obj.Generation != pol.generation {
		pol.generation = obj.Generation
		pol.selector = selectorOf(&obj.Spec.Selector)
		for _, p := range c.namespace(pol.namespace).pods {
			c.classify(pol, p)
		}
		c.evaluateBudget(pol, o.At)
	}
	c.judgeRun(pol, o.At)
}

// selectorOf is s as a selector; one that does not parse (admission
// refuses it) selects nothing.
func selectorOf(s *metav1.LabelSelector) labels.Selector {
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return labels.Nothing()
	}
	return sel
}

// respectsBudgets says whether the policy holds back for
// PodDisruptionBudgets: spec.rollout.respectPodDisruptionBudgets, true by
// default and for a policy not seen.
func (c *Checker) respectsBudgets(uid types.UID) bool {
	pol := c.policies[uid]
	if pol == nil || pol.obj.Spec.Rollout.RespectPodDisruptionBudgets == nil {
		return true
	}
	return *pol.obj.Spec.Rollout.RespectPodDisruptionBudgets
}
