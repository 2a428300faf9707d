package crr

import (
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/rejuv-dev/rejuv/api/apps"
)

// TestAGatedPodIsReadyWithoutALeader: a manager that never becomes leader
// (another holds its lease) still gives a new pod with the readiness gate
// its condition, so the pod can become Ready while no replica leads. Only
// that manager sees the pod (the suite's manager ignores its label).
func TestAGatedPodIsReadyWithoutALeader(t *testing.T) {
	needsAPIServer(t)
	ctx := t.Context()
	ns := newNamespace(t)
	const leaseName = "rejuv-healer-leaderless"
	if err := admin.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: leaseName},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: new("another-replica"), LeaseDurationSeconds: new(int32(3600)),
			AcquireTime: &metav1.MicroTime{Time: time.Now()}, RenewTime: &metav1.MicroTime{Time: time.Now()},
		},
	}); err != nil {
		t.Fatal(err)
	}
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	leaderless, err := labels.Parse(leaderlessLabel)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: scheme, Metrics: metricsserver.Options{BindAddress: "0"},
		LeaderElection: true, LeaderElectionID: leaseName, LeaderElectionNamespace: ns,
		// A second manager in this process registers the same controller
		// names as the suite's.
		Controller: config.Controller{SkipNameValidation: new(true)},
		Cache:      cache.Options{ByObject: map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: leaderless}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&PodReadinessReconciler{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	elected := mgr.Elected()
	go func() { _ = mgr.Start(ctx) }()

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web", Labels: map[string]string{leaderlessLabel: "true"}},
		Spec: corev1.PodSpec{
			Containers:     []corev1.Container{{Name: "app", Image: "img"}},
			ReadinessGates: []corev1.PodReadinessGate{{ConditionType: PodReadyCondition}},
		},
	}
	if err := admin.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	waitPodReady(t, pod, corev1.ConditionTrue)
	select {
	case <-elected:
		t.Fatal("the manager became leader: the lease held by another replica did not keep it out")
	default:
	}
}
