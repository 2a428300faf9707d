package recreatepolicy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/policy/policytest"
)

// pad40KiB is a Rego string of 40 KiB, made as the rule runs.
const pad40KiB = `concat("", [x | some i in numbers.range(1, 4096); x := "xxxxxxxxxx"])`

// restartPolicy is a policy over the pods labelled app, with rules, that
// asks for a restart at at and lets every pod be recreated at once, again
// at once (cooldown 0) and its requests go at once (TTL 0).
func restartPolicy(app string, at time.Time, rules ...v1alpha1.Rule) v1alpha1.RecreatePolicySpec {
	return v1alpha1.RecreatePolicySpec{
		Selector:  metav1.LabelSelector{MatchLabels: map[string]string{"app": app}},
		RestartAt: &metav1.Time{Time: at},
		Rules:     rules,
		Rollout:   v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("100%"))},
		Limits:    v1alpha1.Limits{Cooldown: &metav1.Duration{}, MaxMatchingPercent: new(int32(100))},
		Recreate:  v1alpha1.RecreateTemplate{TTLSecondsAfterFinished: new(int32(0))},
	}
}

// passes runs n passes of the policy as the manager, the daemon and the
// request's TTL would: each pass is reconciled, the requests it created are
// completed (the kubelet starts the container again), and those completed
// at the pass before are deleted. It returns the requests created for
// each pod, by UID, and the passes' errors.
func passes(t *testing.T, c *testReconciler, p *v1alpha1.RecreatePolicy, n int) (map[string]map[types.UID]bool, []error) {
	t.Helper()
	created := map[string]map[types.UID]bool{}
	var errs []error
	for range n {
		_, err := c.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)})
		if err != nil {
			errs = append(errs, err)
		}
		for _, crr := range requestsOf(t, p) {
			if created[crr.Spec.PodName] == nil {
				created[crr.Spec.PodName] = map[types.UID]bool{}
			}
			created[crr.Spec.PodName][crr.UID] = true
			if crr.Status.Phase == appsv1beta1.PhaseCompleted {
				if err := admin.Delete(context.Background(), &crr); err != nil {
					t.Fatal(err)
				}
				continue
			}
			complete(t, c, &crr, true)
		}
		c.clock.Step(20 * time.Second)
	}
	return created, errs
}

// TestAStatusTooLargeStillFits: a rule that yields a huge value fails, and
// its error echoes the value. The Ready condition says so, cut to the
// condition's bound with a note that it was; the status is written, the
// requested restart is handled once, and no pod is recreated again once
// its request is gone.
func TestAStatusTooLargeStillFits(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "web", 2, c.clock.Now().Add(-time.Hour))
	at := c.clock.Now().Add(-time.Second)
	p := createPolicy(t, ns, "huge", restartPolicy("web", at, v1alpha1.Rule{Name: "huge", Rego: policytest.HugeValue}))

	created, errs := passes(t, c, p, 8)
	if len(errs) > 0 {
		t.Errorf("%d of 8 passes failed, the first: %v", len(errs), errs[0])
	}
	if len(created) != 2 {
		t.Errorf("requests for %d pods, want both", len(created))
	}
	for pod, uids := range created {
		if len(uids) != 1 {
			t.Errorf("pod %s was recreated %d times by the one restart, want once", pod, len(uids))
		}
	}
	status := getPolicy(t, p).Status
	ready := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionReady)
	if ready == nil || ready.Reason != v1alpha1.ReasonEvaluationFailed || len(ready.Message) > v1alpha1.MaxMessageLength ||
		!strings.Contains(ready.Message, "rule huge failed for 2 pods") || !strings.Contains(ready.Message, "truncated") {
		t.Errorf("Ready = %.300v (%d bytes), want reason %s naming the rule, within %d bytes, saying it was truncated",
			ready, len(readyMessage(ready)), v1alpha1.ReasonEvaluationFailed, v1alpha1.MaxMessageLength)
	}
	if status.RestartedAt == nil || !status.RestartedAt.Time.Equal(at) {
		t.Errorf("restartedAt %v, want %s", status.RestartedAt, at.UTC())
	}
	if status.Run == nil || status.Run.State != v1alpha1.RunCompleted || status.Run.Recreated != 2 {
		t.Errorf("run %+v, want Completed with 2 pods recreated", status.Run)
	}
	// The events API refuses a note over its bound: the rule's failure
	// would be reported nowhere.
	for {
		select {
		case e := <-c.recorder.Events:
			typ, rest, _ := strings.Cut(e, " ")
			reason, note, _ := strings.Cut(rest, " ")
			if len(note) > v1alpha1.MaxNoteLength {
				t.Errorf("%s event %s has a note of %d bytes (%.80q...), over the events API's bound of %d", typ, reason, len(note), note, v1alpha1.MaxNoteLength)
			}
			continue
		default:
		}
		break
	}
}

func readyMessage(c *metav1.Condition) string {
	if c == nil {
		return ""
	}
	return c.Message
}

// TestReasonsAreBounded: a rule's reason of 40 KiB is cut to the bound of
// a reason, with a note that it was, on the request's rejuv.dev/reason
// annotation and in the policy's decisions.
func TestReasonsAreBounded(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	createPods(t, ns, "web", 1, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "long", rulePolicy("web", `package custom
import rego.v1
recreate contains {"container": c.name, "reason": concat("", ["it leaks: ", `+pad40KiB+`])} if {
	some c in input.containers
}
`))
	c.reconcile(t, p)
	crrs := requestsOf(t, p)
	if len(crrs) != 1 {
		t.Fatalf("%d requests, want 1", len(crrs))
	}
	bounded := func(what, s string) {
		t.Helper()
		if len(s) > v1alpha1.MaxReasonLength || !strings.HasPrefix(s, "asked: app: it leaks: xxx") || !strings.Contains(s, "truncated") {
			t.Errorf("%s is %d bytes (%.60q...), want at most %d, its start, saying it was truncated", what, len(s), s, v1alpha1.MaxReasonLength)
		}
	}
	bounded("the request's reason", crrs[0].Annotations[appsv1beta1.ReasonAnnotation])
	decisions := getPolicy(t, p).Status.RecentDecisions
	if len(decisions) == 0 {
		t.Fatal("no decision")
	}
	bounded("the decision's reason", decisions[0].Reason)
}

// refuseStatusWrites makes the API server refuse the controller's writes
// of policies' status, as it does a status too large for etcd, while the
// returned flag is true.
func refuseStatusWrites(t *testing.T, c *testReconciler) *bool {
	t.Helper()
	watching, err := client.NewWithWatch(env.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	refused := true
	c.Client = interceptor.NewClient(watching, interceptor.Funcs{
		SubResourcePatch: func(ctx context.Context, cl client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			if _, ok := obj.(*v1alpha1.RecreatePolicy); ok && refused {
				return errors.New("etcdserver: request is too large")
			}
			return cl.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	return &refused
}

// TestAQuarantineHoldsWithoutItsStatus: a rule the sandbox stopped is not
// evaluated again while the status that says so cannot be written: the
// policy halts once (one Halted event), not at every pass.
func TestAQuarantineHoldsWithoutItsStatus(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	refuseStatusWrites(t, c)
	createPods(t, ns, "web", 1, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "runaway", rulePolicy("web", `package custom
import rego.v1
recreate contains c.name if {
	some c in input.containers
	count(numbers.range(0, 100000)) > 0
}
`))
	halts := 0
	for range 4 {
		if _, err := c.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(p)}); err == nil {
			t.Fatal("a pass wrote the status that cannot be written")
		}
		c.clock.Step(time.Minute)
		for {
			e, more := "", true
			select {
			case e = <-c.recorder.Events:
			default:
				more = false
			}
			if !more {
				break
			}
			if strings.HasPrefix(e, "Warning Halted ") && strings.Contains(e, "the sandbox stopped") {
				halts++
			}
		}
	}
	if halts != 1 {
		t.Errorf("the sandbox stopped the rule at %d of 4 passes, want the first only", halts)
	}
}

// TestAFailedStatusWriteRepeatsNothing: while the policy's status cannot
// be written, the requested restart still starts once and carries on, no
// pod is recreated again once its request is gone, and each failed write
// is a Warning event that says why; once writes go through, the status
// shows the restart handled and the run complete.
func TestAFailedStatusWriteRepeatsNothing(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	refused := refuseStatusWrites(t, c)
	createPods(t, ns, "web", 2, c.clock.Now().Add(-time.Hour))
	at := c.clock.Now().Add(-time.Second)
	p := createPolicy(t, ns, "unwritable", restartPolicy("web", at))

	created, errs := passes(t, c, p, 6)
	if len(errs) != 6 {
		t.Errorf("%d of 6 passes failed while the status cannot be written, want all", len(errs))
	}
	if len(created) != 2 {
		t.Errorf("requests for %d pods, want both", len(created))
	}
	for pod, uids := range created {
		if len(uids) != 1 {
			t.Errorf("pod %s was recreated %d times by the one restart, want once", pod, len(uids))
		}
	}
	if e, ok := warned(c, "StatusWriteFailed", "request is too large"); !ok {
		t.Errorf("no Warning event StatusWriteFailed saying why; events: %s", e)
	}

	*refused = false
	if _, errs := passes(t, c, p, 2); len(errs) > 0 {
		t.Fatalf("a pass failed once the status can be written: %v", errs[0])
	}
	status := getPolicy(t, p).Status
	if status.RestartedAt == nil || !status.RestartedAt.Time.Equal(at) {
		t.Errorf("restartedAt %v, want %s", status.RestartedAt, at.UTC())
	}
	if status.Run == nil || status.Run.State != v1alpha1.RunCompleted || status.Run.Recreated != 2 {
		t.Errorf("run %+v, want Completed with 2 pods recreated", status.Run)
	}
}

// TestARunTooLargeToRecordIsRefused: a run whose baseline would be over
// status.run.baseline's bound does not start: the policy is halted with a
// condition that names the field and the bound, the restart counts as
// handled, and no request is created.
func TestARunTooLargeToRecordIsRefused(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	// Pods of 100 containers with 63-character names: about 7.9 KiB of
	// baseline each.
	n := v1alpha1.MaxBaselineBytes/(100*79) + 3
	for i := range n {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("wide-%d", i), Labels: map[string]string{"app": "wide"}},
			Spec:       corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{{Name: "app", Image: "img"}}},
		}
		if err := admin.Create(context.Background(), pod); err != nil {
			t.Fatal(err)
		}
		pod.Status = corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
		for j := range 100 {
			name := fmt.Sprintf("c%02d-%s", j, strings.Repeat("n", 59))
			pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
				Name: name, Image: "img", ContainerID: fmt.Sprintf("containerd://%s-%02d-1", pod.Name, j), Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(c.clock.Now().Add(-time.Hour))}},
			})
		}
		if err := admin.Status().Update(context.Background(), pod); err != nil {
			t.Fatalf("update the status of pod %s: %v", pod.Name, err)
		}
	}
	at := c.clock.Now().Add(-time.Second)
	p := createPolicy(t, ns, "wide", restartPolicy("wide", at))
	c.reconcile(t, p)
	c.reconcile(t, p)

	status := getPolicy(t, p).Status
	halted := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionHalted)
	if halted == nil || halted.Status != metav1.ConditionTrue || halted.Reason != v1alpha1.ReasonRunTooLarge ||
		!strings.Contains(halted.Message, "status.run.baseline") || !strings.Contains(halted.Message, fmt.Sprint(v1alpha1.MaxBaselineBytes)) {
		t.Errorf("Halted = %+v, want True, reason %s, naming status.run.baseline and its bound", halted, v1alpha1.ReasonRunTooLarge)
	}
	if status.Run != nil {
		t.Errorf("run %+v, want none started", status.Run)
	}
	if status.RestartedAt == nil || !status.RestartedAt.Time.Equal(at) {
		t.Errorf("restartedAt %v, want %s (handled)", status.RestartedAt, at.UTC())
	}
	if n := len(requestsOf(t, p)); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}

// TestDecisionsWrittenBeforeTheBoundAreCut: a status written before the
// schema bounded decisions may hold longer reasons; the schema would now
// refuse the list they are in, so the next write cuts them too, without
// touching the copy it was read into.
func TestDecisionsWrittenBeforeTheBoundAreCut(t *testing.T) {
	long := strings.Repeat("r", 2000)
	read := &v1alpha1.RecreatePolicy{Status: v1alpha1.RecreatePolicyStatus{RecentDecisions: []v1alpha1.Decision{
		{Pod: "web-0", Trigger: "rule/leak", Outcome: v1alpha1.OutcomeCreated, Reason: long, Message: long},
	}}}
	for _, decided := range [][]v1alpha1.Decision{nil, {{Pod: "web-1", Trigger: "rule/leak", Outcome: v1alpha1.OutcomeCreated, Reason: "leak"}}} {
		p := &v1alpha1.RecreatePolicy{}
		p.Status.RecentDecisions = read.Status.RecentDecisions
		flush(p, decided)
		for _, d := range p.Status.RecentDecisions {
			if len(d.Reason) > v1alpha1.MaxReasonLength || len(d.Message) > v1alpha1.MaxReasonLength {
				t.Errorf("with %d new decisions, the decision on %s keeps a reason of %d bytes and a message of %d, over %d", len(decided), d.Pod, len(d.Reason), len(d.Message), v1alpha1.MaxReasonLength)
			}
		}
		if read.Status.RecentDecisions[0].Reason != long {
			t.Error("the decisions as read were changed")
		}
	}
}
