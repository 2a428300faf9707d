package recreatepolicy

import (
	"context"
	"slices"
	"testing"
	"time"

	kruise "github.com/openkruise/kruise-api/apps/v1alpha1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/discovery"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// besideOpenKruise starts a second API server with OpenKruise's request
// CRD, generated from OpenKruise's published API module, and Rejuv's
// policy CRD; until the test ends, the fixtures work on it. It returns a
// client that reads requests with OpenKruise's own Go type, as OpenKruise
// does.
func besideOpenKruise(t *testing.T) client.Client {
	t.Helper()
	needsAPIServer(t)
	env, err := harness.EnvtestBesideOpenKruise(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start the API server with OpenKruise's CRD: %v", err)
	}
	t.Cleanup(func() { _ = env.Stop() })
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	theirScheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(theirScheme); err != nil {
		t.Fatal(err)
	}
	if err := kruise.AddToScheme(theirScheme); err != nil {
		t.Fatal(err)
	}
	theirs, err := client.New(cfg, client.Options{Scheme: theirScheme})
	if err != nil {
		t.Fatal(err)
	}
	// The premise: the API serves requests in v1alpha1 alone.
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	groups, err := dc.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == kruise.GroupVersion.Group && (len(g.Versions) != 1 || g.Versions[0].Version != "v1alpha1") {
			t.Fatalf("apps.kruise.io serves %v, want v1alpha1 alone as OpenKruise's CRD does", g.Versions)
		}
	}
	saved := admin
	admin = c
	t.Cleanup(func() { admin = saved })
	return theirs
}

// kruiseRequests are the policy's requests as OpenKruise reads them.
func kruiseRequests(t *testing.T, theirs client.Client, p *v1alpha1.RecreatePolicy) []kruise.ContainerRecreateRequest {
	t.Helper()
	list := &kruise.ContainerRecreateRequestList{}
	if err := theirs.List(context.Background(), list, client.InNamespace(p.Namespace), client.MatchingLabels{v1beta1.PolicyLabel: p.Name}); err != nil {
		t.Fatalf("list the requests with OpenKruise's type: %v", err)
	}
	return list.Items
}

// kruiseComplete plays OpenKruise: the request completed, each container
// in the given phase, and no result recorded (OpenKruise has none).
func kruiseComplete(t *testing.T, theirs client.Client, c *testReconciler, crr *kruise.ContainerRecreateRequest, phase kruise.ContainerRecreateRequestPhase) {
	t.Helper()
	crr.Status = kruise.ContainerRecreateRequestStatus{
		Phase: kruise.ContainerRecreateRequestCompleted, CompletionTime: &metav1.Time{Time: c.clock.Now()},
		ContainerRecreateStates: []kruise.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: phase}},
	}
	if err := theirs.Status().Update(context.Background(), crr); err != nil {
		t.Fatalf("complete request %s as OpenKruise: %v", crr.Name, err)
	}
}

// TestScheduledRunBesideOpenKruise: with requests in v1alpha1 (OpenKruise's
// CRD, no conversion), a run creates requests OpenKruise's type reads
// whole, one pod at a time, follows OpenKruise's completions to the end of
// the run, and recreates no pod twice.
func TestScheduledRunBesideOpenKruise(t *testing.T) {
	theirs := besideOpenKruise(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	c.Requests = RequestsV1alpha1
	pods := createPods(t, ns, "web", 3, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "nightly", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
		Recreate: v1alpha1.RecreateTemplate{ActiveDeadlineSeconds: new(int64(300))},
	})
	c.reconcile(t, p)
	c.clock.SetTime(getPolicy(t, p).Status.NextScheduleTime.Add(time.Second))

	maxInFlight := 0
	for range 10 {
		c.reconcile(t, p)
		crrs := kruiseRequests(t, theirs, p)
		open := 0
		for i := range crrs {
			if crrs[i].Status.Phase != kruise.ContainerRecreateRequestCompleted {
				open++
			}
		}
		maxInFlight = max(maxInFlight, open)
		if open == 0 {
			break
		}
		c.clock.Step(20 * time.Second)
		for i := range crrs {
			if crrs[i].Status.Phase == "" {
				kruiseComplete(t, theirs, c, &crrs[i], kruise.ContainerRecreateRequestSucceeded)
				restarted(t, c, ns, crrs[i].Spec.PodName, true)
			}
		}
	}

	crrs := kruiseRequests(t, theirs, p)
	var podNames []string
	for _, crr := range crrs {
		podNames = append(podNames, crr.Spec.PodName)
		owner := metav1.GetControllerOf(&crr)
		if len(crr.Spec.Containers) != 1 || crr.Spec.Containers[0].Name != "app" || crr.Spec.ActiveDeadlineSeconds == nil || *crr.Spec.ActiveDeadlineSeconds != 300 ||
			owner == nil || owner.UID != p.UID || crr.Annotations[v1beta1.RunAnnotation] == "" {
			t.Errorf("request %s as OpenKruise reads it: %+v", crr.Name, crr)
		}
	}
	slices.Sort(podNames)
	if want := []string{pods[0].Name, pods[1].Name, pods[2].Name}; !slices.Equal(podNames, want) || maxInFlight != 1 {
		t.Fatalf("requests for pods %v, at most %d in flight; want one each for %v, one at a time", podNames, maxInFlight, want)
	}
	run := getPolicy(t, p).Status.Run
	if run == nil || run.State != v1alpha1.RunCompleted || run.Recreated != 3 {
		t.Errorf("run %+v, want Completed with 3 pods recreated", run)
	}
}

// TestFailedRequestBesideOpenKruise: OpenKruise records a failed container
// in its state alone; the run halts on it as on a failed Rejuv request,
// whatever result annotation of Rejuv's someone wrote on it.
func TestFailedRequestBesideOpenKruise(t *testing.T) {
	theirs := besideOpenKruise(t)
	ns := newNamespace(t)
	c := newController(t, 0)
	c.Requests = RequestsV1alpha1
	createPods(t, ns, "api", 2, c.clock.Now().Add(-time.Hour))
	p := createPolicy(t, ns, "nightly", v1alpha1.RecreatePolicySpec{
		Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "api"}},
		Schedule: &v1alpha1.Schedule{Cron: "0 3 * * *"},
		Rollout:  v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))},
	})
	c.reconcile(t, p)
	c.clock.SetTime(getPolicy(t, p).Status.NextScheduleTime.Add(time.Second))
	c.reconcile(t, p)
	crrs := kruiseRequests(t, theirs, p)
	if len(crrs) != 1 {
		t.Fatalf("%d requests after the run started, want 1", len(crrs))
	}
	// Someone who may patch the request writes Rejuv's own result
	// annotation on it: OpenKruise writes none, so it is not the result.
	if crrs[0].Annotations == nil {
		crrs[0].Annotations = map[string]string{}
	}
	crrs[0].Annotations["rejuv.dev/result"] = "Succeeded"
	if err := theirs.Update(context.Background(), &crrs[0]); err != nil {
		t.Fatal(err)
	}
	kruiseComplete(t, theirs, c, &crrs[0], kruise.ContainerRecreateRequestFailed)
	c.clock.Step(10 * time.Second)
	c.reconcile(t, p)

	status := getPolicy(t, p).Status
	if status.Run == nil || status.Run.State != v1alpha1.RunHalted {
		t.Fatalf("run %+v, want Halted by the failed request", status.Run)
	}
	if cond := meta.FindStatusCondition(status.Conditions, v1alpha1.ConditionHalted); cond == nil || cond.Reason != v1alpha1.ReasonRunFailed {
		t.Errorf("conditions %+v, want Halted for RunFailed", status.Conditions)
	}
	if n := len(kruiseRequests(t, theirs, p)); n != 1 {
		t.Errorf("%d requests after the failure, want no more than the failed one", n)
	}
}
