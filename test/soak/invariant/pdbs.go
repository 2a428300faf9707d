package invariant

import (
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

// A pdb is what the checker keeps of one PodDisruptionBudget.
type pdb struct {
	uid             types.UID
	namespace, name string
	// obj is the budget as last seen.
	obj      *policyv1.PodDisruptionBudget
	selector labels.Selector
}

// budgetSeen applies a PodDisruptionBudget's watch event.
func (c *Checker) budgetSeen(o BudgetSeen) {
	obj := o.Budget
	if obj == nil {
		return
	}
	ns := c.namespace(obj.Namespace)
	if o.Gone {
		delete(ns.pdbs, obj.UID)
		delete(c.pdbs, obj.UID)
		return
	}
	b := c.pdbs[obj.UID]
	if b == nil {
		b = &pdb{uid: obj.UID, namespace: obj.Namespace, name: obj.Name}
		c.pdbs[b.uid] = b
		ns.pdbs[b.uid] = b
	}
	b.obj = obj
	// policy/v1: a null selector selects no pod, an empty one every pod
	// of the namespace.
	b.selector = labels.Nothing()
	if obj.Spec.Selector != nil {
		b.selector = selectorOf(obj.Spec.Selector)
	}
}

// covers says whether b counts p.
func (b *pdb) covers(p *pod) bool {
	return p.namespace == b.namespace && b.selector.Matches(labels.Set(p.obj.Labels))
}

// key is the budget's namespace/name.
func (b *pdb) key() string { return b.namespace + "/" + b.name }
