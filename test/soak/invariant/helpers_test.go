package invariant

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// The tests' namespace, and the soak's first moment.
const ns = "shop"

var start = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// at is sec seconds into the soak.
func at(sec float64) time.Time { return start.Add(time.Duration(sec * float64(time.Second))) }

// soak collects observations at offsets in seconds, copying every object
// so that later changes to it are not seen, and feeds them to a checker
// in time order (in the order given among equal times) at finish: each
// object's story can be told on its own.
type soak struct {
	c   *Checker
	obs []Observation
}

func newSoak(traffic ...Fault) *soak {
	return &soak{c: NewChecker(DefaultSlack(), traffic)}
}

func (s *soak) add(o Observation) { s.obs = append(s.obs, o) }

func (s *soak) pod(sec float64, p *corev1.Pod) {
	s.add(PodSeen{At: at(sec), Pod: p.DeepCopy()})
}

func (s *soak) podGone(sec float64, p *corev1.Pod) {
	s.add(PodSeen{At: at(sec), Pod: p.DeepCopy(), Gone: true})
}

func (s *soak) request(sec float64, r *v1beta1.ContainerRecreateRequest) {
	s.add(RequestSeen{At: at(sec), Request: r.DeepCopy()})
}

func (s *soak) requestGone(sec float64, r *v1beta1.ContainerRecreateRequest) {
	s.add(RequestSeen{At: at(sec), Request: r.DeepCopy(), Gone: true})
}

func (s *soak) policy(sec float64, p *v1alpha1.RecreatePolicy) {
	s.add(PolicySeen{At: at(sec), Policy: p.DeepCopy()})
}

func (s *soak) pdb(sec float64, b *policyv1.PodDisruptionBudget) {
	s.add(BudgetSeen{At: at(sec), Budget: b.DeepCopy()})
}

func (s *soak) component(sec float64, p *corev1.Pod) {
	s.add(ComponentSeen{At: at(sec), Pod: p.DeepCopy()})
}

func (s *soak) componentGone(sec float64, p *corev1.Pod) {
	s.add(ComponentSeen{At: at(sec), Pod: p.DeepCopy(), Gone: true})
}

func (s *soak) fault(sec float64, id int, kind Fault, target string) {
	s.add(FaultStarted{At: at(sec), ID: id, Kind: kind, Target: target})
}

func (s *soak) faultEnded(sec float64, id int) {
	s.add(FaultEnded{At: at(sec), ID: id})
}

func (s *soak) clientFailed(sec float64, service string) {
	s.add(ClientFailed{At: at(sec), Service: service, Err: "connection refused"})
}

// tick is an observation that changes nothing the checker keeps (the
// end of a fault it never saw begin): time passing.
func (s *soak) tick(sec float64) {
	s.add(FaultEnded{At: at(sec), ID: -1})
}

// finish feeds the observations, ends the soak at sec and returns the
// report.
func (s *soak) finish(sec float64) Report {
	slices.SortStableFunc(s.obs, func(a, b Observation) int { return a.When().Compare(b.When()) })
	for _, o := range s.obs {
		s.c.Observe(o)
	}
	return s.c.Finish(at(sec))
}

// only returns the violations of inv in rep.
func only(rep Report, inv Invariant) []Violation {
	var out []Violation
	for _, v := range rep.Violations {
		if v.Invariant == inv {
			out = append(out, v)
		}
	}
	return out
}

// expect fails unless rep has want violations of inv, each saying what.
func expect(t *testing.T, rep Report, inv Invariant, want int, what string) {
	t.Helper()
	got := only(rep, inv)
	if len(got) != want {
		t.Fatalf("%s: got %d violations, want %d:\n%s", inv, len(got), want, dump(rep))
	}
	for _, v := range got {
		if !strings.Contains(v.What, what) {
			t.Errorf("%s: violation says %q, want it to say %q", inv, v.What, what)
		}
	}
}

// quiet fails if rep has any violation.
func quiet(t *testing.T, rep Report) {
	t.Helper()
	if len(rep.Violations) > 0 {
		t.Fatalf("got %d violations, want none:\n%s", len(rep.Violations), dump(rep))
	}
}

func dump(rep Report) string {
	var b strings.Builder
	for _, v := range rep.Violations {
		fmt.Fprintf(&b, "%s %s\n", v.At.Sub(start), v)
	}
	return b.String()
}

// newPod is a Ready pod labelled app=web on node-1 with one container,
// app, in its first instance.
func newPod(name string, containers ...string) *corev1.Pod {
	if len(containers) == 0 {
		containers = []string{"app"}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("pod-" + name), Labels: map[string]string{"app": "web"}},
		Spec:       corev1.PodSpec{NodeName: "node-1"},
	}
	for _, c := range containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c, ContainerID: containerID(name, c, 0), Ready: true})
	}
	setReady(p, true)
	setInService(p, true)
	return p
}

// containerID is the ID of instance n of a pod's container.
func containerID(pod, container string, n int32) string {
	return fmt.Sprintf("containerd://%s-%s-%d-0123456789abcdef", pod, container, n)
}

// restartContainer makes p's container a new instance.
func restartContainer(p *corev1.Pod, container string) {
	for i := range p.Status.ContainerStatuses {
		s := &p.Status.ContainerStatuses[i]
		if s.Name == container {
			s.LastTerminationState.Terminated = &corev1.ContainerStateTerminated{ContainerID: s.ContainerID, Reason: "Error", ExitCode: 137}
			s.RestartCount++
			s.ContainerID = containerID(p.Name, container, s.RestartCount)
		}
	}
}

func setCondition(p *corev1.Pod, t corev1.PodConditionType, ok bool) {
	status := corev1.ConditionFalse
	if ok {
		status = corev1.ConditionTrue
	}
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == t {
			p.Status.Conditions[i].Status = status
			return
		}
	}
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: t, Status: status})
}

func setReady(p *corev1.Pod, ok bool) { setCondition(p, corev1.PodReady, ok) }

func setInService(p *corev1.Pod, ok bool) { setCondition(p, v1beta1.PodReadyCondition, ok) }

// newPolicy selects app=web with maxUnavailable mu ("" for the default).
func newPolicy(name, mu string) *v1alpha1.RecreatePolicy {
	p := &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("policy-" + name), Generation: 1},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		},
	}
	if mu != "" {
		v := intstr.Parse(mu)
		p.Spec.Rollout.MaxUnavailable = &v
	}
	return p
}

// newRequest asks for p's containers (app when none) to be recreated, for
// policy pol (nil: by hand), with trigger and run as given.
func newRequest(name string, p *corev1.Pod, pol *v1alpha1.RecreatePolicy, containers ...string) *v1beta1.ContainerRecreateRequest {
	if len(containers) == 0 {
		containers = []string{"app"}
	}
	r := &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("crr-" + name),
			Labels: map[string]string{v1beta1.PodUIDLabel: string(p.UID)}, Annotations: map[string]string{}},
		Spec:   v1beta1.ContainerRecreateRequestSpec{PodName: p.Name},
		Status: v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhasePending},
	}
	for _, c := range containers {
		r.Spec.Containers = append(r.Spec.Containers, v1beta1.ContainerRecreateRequestContainer{Name: c})
	}
	if pol != nil {
		yes := true
		r.OwnerReferences = []metav1.OwnerReference{{APIVersion: v1alpha1.GroupVersion.String(), Kind: "RecreatePolicy",
			Name: pol.Name, UID: pol.UID, Controller: &yes}}
		r.Labels[v1beta1.PolicyLabel] = pol.Name
		r.Labels[v1beta1.TriggerLabel] = "schedule"
	}
	return r
}

// inRun marks r as a request of the run scheduled at run.
func inRun(r *v1beta1.ContainerRecreateRequest, run time.Time) *v1beta1.ContainerRecreateRequest {
	r.Annotations[v1beta1.RunAnnotation] = run.UTC().Format(time.RFC3339)
	return r
}

// byRule marks r as asked for by rule.
func byRule(r *v1beta1.ContainerRecreateRequest, rule string) *v1beta1.ContainerRecreateRequest {
	r.Labels[v1beta1.TriggerLabel] = "rule." + rule
	return r
}

// complete ends r with result, every container in the matching phase.
func complete(r *v1beta1.ContainerRecreateRequest, result v1beta1.ContainerRecreateRequestResult) {
	r.Status.Phase = v1beta1.PhaseCompleted
	r.Status.Result = result
	phase := v1beta1.PhaseFailed
	if result == v1beta1.ResultSucceeded {
		phase = v1beta1.PhaseSucceeded
	}
	r.Status.ContainerRecreateStates = nil
	for _, c := range r.Spec.Containers {
		r.Status.ContainerRecreateStates = append(r.Status.ContainerRecreateStates,
			v1beta1.ContainerRecreateRequestContainerRecreateState{Name: c.Name, Phase: phase})
	}
}

// newPDB covers app=web and wants desired pods healthy.
func newPDB(name string, desired int32) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("pdb-" + name)},
		Spec:       policyv1.PodDisruptionBudgetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
		Status:     policyv1.PodDisruptionBudgetStatus{DesiredHealthy: desired},
	}
}

// recreation is the usual life of one request on one pod, from sec: the
// request is seen, the pod taken out of service, its container restarted,
// the request ends Succeeded at sec+6 and the pod is seen back at
// sec+back.
func (s *soak) recreation(sec float64, r *v1beta1.ContainerRecreateRequest, p *corev1.Pod, back float64) {
	s.request(sec, r)
	r.Status.Phase = v1beta1.PhaseRecreating
	s.request(sec+0.5, r)
	setInService(p, false)
	setReady(p, false)
	s.pod(sec+1, p)
	for _, c := range r.Spec.Containers {
		restartContainer(p, c.Name)
	}
	s.pod(sec+3, p)
	complete(r, v1beta1.ResultSucceeded)
	s.request(sec+6, r)
	setInService(p, true)
	setReady(p, true)
	s.pod(sec+back, p)
}

// selected makes n pods named by podName, seen at 0, and pol, which
// selects them.
func (s *soak) selected(pol *v1alpha1.RecreatePolicy, n int) []*corev1.Pod {
	var pods []*corev1.Pod
	for i := range n {
		pods = append(pods, newPod(podName(i)))
		s.pod(0, pods[i])
	}
	s.policy(0, pol)
	return pods
}
