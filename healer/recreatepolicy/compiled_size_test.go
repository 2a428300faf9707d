package recreatepolicy

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy"
)

// tableRego is an inline rule of about size bytes, most of them a literal
// table of ones.
func tableRego(pkg string, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\nimport rego.v1\nrecreate contains {\"container\": \"app\", \"reason\": \"listed\"} if table[0] == 2\ntable := [", pkg)
	for b.Len() < size-3 {
		b.WriteString("1,")
	}
	b.WriteString("1]\n")
	return b.String()
}

func tablePolicy(t *testing.T, ns, name string, size int) *v1alpha1.RecreatePolicy {
	t.Helper()
	return createPolicy(t, ns, name, v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Rules:    []v1alpha1.Rule{{Name: "table", Rego: tableRego("table", size)}},
	})
}

// TestCompiledSizeOverItsBoundsIsACondition: a policy that got past the
// webhook (none here) with a 64 KiB literal table, within the CRD's
// maxLength, is not compiled: RulesCompiled=False names the bound per
// policy. One within that bound but past the manager's bound for all
// policies' rules says so too, and is compiled at a later pass once the
// other policy is gone.
func TestCompiledSizeOverItsBoundsIsACondition(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "web", 1, c.clock.Now())

	huge := tablePolicy(t, ns, "huge", 65536)
	c.reconcile(t, huge)
	cond := meta.FindStatusCondition(getPolicy(t, huge).Status.Conditions, v1alpha1.ConditionRulesCompiled)
	if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "over the bound of 8 MiB per policy") {
		t.Fatalf("RulesCompiled of a 64 KiB table: %+v, want False naming the bound of 8 MiB per policy", cond)
	}
	t.Logf("RulesCompiled: %s", cond.Message)

	// A manager whose bound fits one 12 KB table (3.1 MiB estimated) and not two.
	c.Engine = policy.NewEngine(policy.Options{MaxCompiledBytes: 5 << 20})
	first := tablePolicy(t, ns, "first", 12_000)
	second := tablePolicy(t, ns, "second", 12_001)
	c.reconcile(t, first)
	if !meta.IsStatusConditionTrue(getPolicy(t, first).Status.Conditions, v1alpha1.ConditionRulesCompiled) {
		t.Fatalf("premise: the first policy's rules: %+v, want compiled", getPolicy(t, first).Status.Conditions)
	}
	res := c.reconcile(t, second)
	cond = meta.FindStatusCondition(getPolicy(t, second).Status.Conditions, v1alpha1.ConditionRulesCompiled)
	if cond == nil || cond.Status != metav1.ConditionFalse || !strings.Contains(cond.Message, "over the manager's bound of 5 MiB for compiled rules") || res.RequeueAfter != time.Minute {
		t.Fatalf("RulesCompiled of the second policy: %+v, requeued after %s; want False naming the manager's bound of 5 MiB, tried again in a minute", cond, res.RequeueAfter)
	}
	t.Logf("RulesCompiled: %s", cond.Message)

	if err := admin.Delete(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	c.reconcile(t, first)
	c.reconcile(t, second)
	if !meta.IsStatusConditionTrue(getPolicy(t, second).Status.Conditions, v1alpha1.ConditionRulesCompiled) {
		t.Fatalf("the second policy once the first is gone: %+v, want its rules compiled", getPolicy(t, second).Status.Conditions)
	}
}
