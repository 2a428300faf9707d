package recreatepolicy

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
	"github.com/rejuv-dev/rejuv/healer/pause"
	"github.com/rejuv-dev/rejuv/healer/signals"
	"github.com/rejuv-dev/rejuv/policy"
)

// Reconciler is the policy controller.
type Reconciler struct {
	Client client.Client
	// Reader reads from the API server rather than the cache, to retry a
	// status write that was made from a stale copy.
	Reader   client.Reader
	Engine   *policy.Engine
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// Requests is the version the requests are created and read in
	// (default v1beta1).
	Requests RequestVersion

	// Workers is how many policies are reconciled at once (default 1).
	Workers int
	// EvaluationBudget bounds how long one pass may evaluate a policy's
	// rules over its pods (default DefaultEvaluationBudget); a policy over
	// it halts.
	EvaluationBudget time.Duration
	// Memory is the working set history the memory rules read; nil when
	// the manager samples no memory source.
	Memory MemoryHistory
	// Signals evaluates policies' signals; nil when the manager has no
	// Prometheus.
	Signals SignalSource
	// Pause is the emergency stop, read before every decision; nil never
	// pauses.
	Pause *pause.Switch
	// Journal holds the evaluations that ran past their bounds in a step
	// the sandbox could not stop; their policies are quarantined when the
	// manager starts, before any policy is reconciled. None when nil.
	Journal *policy.Journal

	// journaled is closed once the journal was read at the start.
	journaled chan struct{}
	// state is what the controller remembers between passes.
	state state
}

// MemoryHistory is the working set history of containers (the manager's
// sampler).
type MemoryHistory interface {
	// Memory is the window of a pod's container, or nil with why there
	// is none.
	Memory(pod *corev1.Pod, container string) (*policy.MemoryWindow, string)
	// Describe says what the windows hold at most.
	Describe() string
}

// The no-data signals of the memory rules, which the history explains.

// SignalSource evaluates a policy's signals (the manager's Prometheus).
type SignalSource interface {
	Query(ctx context.Context, namespace string, s []v1alpha1.Signal, now time.Time) *signals.Values
}

// RequestVersion is the version of the ContainerRecreateRequest API the
// controller creates, lists and watches its requests in. Whatever the
// version, the controller reasons about requests as v1beta1, the hub.
type RequestVersion string

const (
	// RequestsV1beta1 is for Rejuv executing the requests: the installed
	// CRD serves v1beta1 and stores it.
	RequestsV1beta1 RequestVersion = "v1beta1"
	// RequestsV1alpha1 is for OpenKruise executing the requests: its CRD
	// serves v1alpha1 alone.
	RequestsV1alpha1 RequestVersion = "v1alpha1"
)

// Object is an empty request of the version, to watch.
func (v RequestVersion) Object() client.Object {
	if v == RequestsV1alpha1 {
		return &appsv1alpha1.ContainerRecreateRequest{}
	}
	return &appsv1beta1.ContainerRecreateRequest{}
}

// list reads the requests of a namespace, as v1beta1. They are the
// cache's own (a pass lists them twice, and during a rolling restart or a
// takeover passes follow each other as the requests change: copying the
// namespace's requests each time was most of what the leader allocated),
// so they are only read: what is written is built anew (planner.Request).
func (v RequestVersion) list(ctx context.Context, c client.Reader, namespace string) ([]appsv1beta1.ContainerRecreateRequest, error) {
	if v != RequestsV1alpha1 {
		list := &appsv1beta1.ContainerRecreateRequestList{}
		if err := c.List(ctx, list, client.InNamespace(namespace), client.UnsafeDisableDeepCopy); err != nil {
			return nil, fmt.Errorf("list the ContainerRecreateRequests of namespace %s: %w", namespace, err)
		}
		return list.Items, nil
	}
	list := &appsv1alpha1.ContainerRecreateRequestList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, fmt.Errorf("list the v1alpha1 ContainerRecreateRequests of namespace %s: %w", namespace, err)
	}
	out := make([]appsv1beta1.ContainerRecreateRequest, len(list.Items))
	for i := range list.Items {
		// Rejuv's own status annotations are not OpenKruise's: on its
		// requests they were written by whoever may patch them, not by
		// an executor, and must not pass for the request's status.
		for _, key := range []string{appsv1beta1.ResultAnnotation, appsv1alpha1.ConditionsAnnotation, appsv1beta1.PreStopStartedAnnotation} {
			delete(list.Items[i].Annotations, key)
		}
		if err := list.Items[i].ConvertTo(&out[i]); err != nil {
			return nil, err
		}
		// OpenKruise records no result: a completed request's containers
		// say how it went.
		if out[i].Status.Phase == appsv1beta1.PhaseCompleted && out[i].Status.Result == "" {
			out[i].Status.Result = appsv1beta1.ResultOf(out[i].Status.ContainerRecreateStates)
		}
	}
	return out, nil
}

// create writes a request in the version; crr becomes what the API
// server stored.
func (v RequestVersion) create(ctx context.Context, c client.Client, crr *appsv1beta1.ContainerRecreateRequest) error {
	if v != RequestsV1alpha1 {
		return c.Create(ctx, crr)
	}
	old := &appsv1alpha1.ContainerRecreateRequest{}
	if err := old.ConvertFrom(crr); err != nil {
		return err
	}
	if err := c.Create(ctx, old); err != nil {
		return err
	}
	return old.ConvertTo(crr)
}

// Passes over the policies of one namespace hold at most half of the
// workers (at least one): many policies of one namespace, each of whose
// passes spends up to the evaluation budget, would otherwise hold every
// worker, and every other namespace's policies would wait for them. A
// pass beyond the namespace's share is put off by namespaceBusyRetry,
// taking no worker meanwhile, and counted in
// rejuv_policy_passes_deferred_total.

// namespaceBusyRetry is how long a pass beyond its namespace's share is
// put off.
const namespaceBusyRetry = 2 * time.Second

// passesPerNamespace is how many passes over one namespace's policies may
// be in flight at once.
func (r *Reconciler) passesPerNamespace() int {
	return max(1, r.Workers/2)
}

// DefaultEvaluationBudget is how long one pass may evaluate a policy's
// rules over its pods when the Reconciler sets no budget: a hundred times
// what ten thousand pods cost with the built-in rules.
const DefaultEvaluationBudget = 10 * time.Second

func (r *Reconciler) evaluationBudget() time.Duration {
	if r.EvaluationBudget > 0 {
		return r.EvaluationBudget
	}
	return DefaultEvaluationBudget
}

// createWorkers is how many requests one pass creates at once. Each create
// waits on the API server and Rejuv's webhook (tens of milliseconds under
// load): one at a time, a rolling restart of a thousand pods spent most of
// its time creating requests, not restarting containers.
const createWorkers = 16
