package policy

import (
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rejuv-dev/rejuv/policy/policytest"
)

func TestContainersOfOneTemplateShareTheirEntriesTerms(t *testing.T) {
	now := time.Now()
	a, b := policytest.Pod(1, now), policytest.Pod(2, now)
	fa, ok1 := findContainerFacts(a, "app")
	fb, ok2 := findContainerFacts(b, "app")
	if !ok1 || !ok2 || fa.image != fb.image || fa.limits != fb.limits {
		t.Fatalf("premise: two pods of one template, found %v %v, %+v %+v", ok1, ok2, fa, fb)
	}
	ca := newContainerEntry(fa).entry(&ContainerCandidate{Name: "app"})
	cb := newContainerEntry(fb).entry(&ContainerCandidate{Name: "app"})
	for _, key := range []*ast.Term{keyName, keyImage, keyResources, keyRecreations, keyMemory} {
		if x, y := ca.term().Get(key), cb.term().Get(key); x != y {
			t.Errorf("%v: two terms, %v and %v", key, x, y)
		}
	}
	if got := ca.term().Get(keyRecreations).String(); got != `{"last": null, "total": 0}` {
		t.Errorf("recreations of a container never recreated: %s", got)
	}
}
