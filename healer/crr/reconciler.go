package crr

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/healer/initiallist"
	"github.com/rejuv-dev/rejuv/healer/pause"
)

// podDeletingMessage is the message of a request ended because its pod is
// being deleted.
const podDeletingMessage = "pod is being deleted"

// Defaults of the Reconciler's tunables (flags of the manager).
const (
	DefaultNodeLostGrace = 60 * time.Second
	DefaultPickupTimeout = 30 * time.Second
)

// Reconciler watches over ContainerRecreateRequests while the daemon
// executes them, and tidies them up once they complete.
type Reconciler struct {
	Client client.Client
	// Reader reads from the API server: a pod the cache misses, or holds
	// in an older incarnation, is confirmed there before its requests are
	// ended.
	Reader   client.Reader
	Recorder events.EventRecorder
	Clock    clock.PassiveClock
	// NodeLostGrace is how long the pod's node may be NotReady or missing
	// before its requests are ended; a request a daemon writes to is kept
	// until the daemon has been silent on it that long too.
	NodeLostGrace time.Duration
	// PickupTimeout is how long a request may wait for a daemon to start
	// it before the manager warns that none seems to run on the node.
	PickupTimeout time.Duration
	// DaemonNamespace is where the daemons run (the manager's namespace):
	// a request not picked up on a node whose daemon pod there is Ready
	// waits for a busy daemon, not a missing one.
	DaemonNamespace string
	// Pause is the emergency stop: while paused, a request no daemon has
	// begun is ended, and with v1alpha1.PauseEnd every request. Nil
	// never pauses.
	Pause *pause.Switch

	startedAt time.Time
	mu        sync.Mutex
	// nodeGoneSince remembers when a node was first seen missing; a
	// deleted node leaves no timestamp of its own.
	nodeGoneSince map[string]time.Time
	// announced remembers the requests whose start has been announced,
	// counted those counted as created; both until they complete.
	announced map[types.UID]bool
	counted   map[types.UID]bool
	// daemonSeen remembers each running request's daemon progress and
	// when it last changed (noteDaemon).
	daemonSeen map[types.NamespacedName]daemonProgress
}

// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=get;list;watch;update;patch;delete
// The manager ends requests of any node (deadline, pod or node gone): the
// daemon-scope ValidatingAdmissionPolicy lets it through by its identity.
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods/status,verbs=patch
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch
// +kubebuilder:rbac:groups=rejuv.dev,resources=recreatepolicies,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// SetupWithManager registers the reconciler.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.setDefaults()
	b := ctrl.NewControllerManagedBy(mgr).
		Named("containerrecreaterequest").
		For(&v1beta1.ContainerRecreateRequest{}).
		// Every request is enqueued at the controller's start: the pods
		// and nodes the informers held then are not mapped to their
		// requests one by one (at a takeover, every pod of the cluster).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(r.activeRequestsOf(func(o client.Object) client.MatchingLabels {
			return client.MatchingLabels{v1beta1.PodUIDLabel: string(o.GetUID())}
		}, true)), builder.WithPredicates(initiallist.Skipped)).
		Watches(&corev1.Node{}, handler.EnqueueRequestsFromMapFunc(r.activeRequestsOf(func(o client.Object) client.MatchingLabels {
			return client.MatchingLabels{v1beta1.NodeNameLabel: o.GetName()}
		}, false)), builder.WithPredicates(initiallist.Skipped))
	if r.Pause != nil {
		// Paused, every active request is looked at once.
		b = b.Watches(&corev1.ConfigMap{}, handler.EnqueueRequestsFromMapFunc(r.activeRequestsOf(func(client.Object) client.MatchingLabels {
			return client.MatchingLabels{}
		}, false)), builder.WithPredicates(r.Pause.Predicate()))
	}
	return b.Complete(r)
}

// setDefaults fills in the tunables left unset and the reconciler's
// memory.
func (r *Reconciler) setDefaults() {
	if r.Reader == nil {
		r.Reader = r.Client
	}
	if r.Clock == nil {
		r.Clock = clock.RealClock{}
	}
	if r.NodeLostGrace == 0 {
		r.NodeLostGrace = DefaultNodeLostGrace
	}
	if r.PickupTimeout == 0 {
		r.PickupTimeout = DefaultPickupTimeout
	}
	r.startedAt = r.Clock.Now()
	r.nodeGoneSince = map[string]time.Time{}
	r.announced = map[types.UID]bool{}
	r.counted = map[types.UID]bool{}
	r.daemonSeen = map[types.NamespacedName]daemonProgress{}
}

// activeRequestsOf maps a pod or node event to the active requests it
// concerns, found by the labels the webhook set.
func (r *Reconciler) activeRequestsOf(selector func(client.Object) client.MatchingLabels, sameNamespace bool) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		labels := selector(o)
		labels[v1beta1.ActiveLabel] = "true"
		opts := []client.ListOption{labels}
		if sameNamespace {
			opts = append(opts, client.InNamespace(o.GetNamespace()))
		}
		list := &v1beta1.ContainerRecreateRequestList{}
		if err := r.Client.List(ctx, list, opts...); err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "list ContainerRecreateRequests for a changed object", "object", o.GetName())
			return nil
		}
		reqs := make([]reconcile.Request, 0, len(list.Items))
		for i := range list.Items {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
		return reqs
	}
}

// Reconcile implements reconcile.Reconciler.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	crr := &v1beta1.ContainerRecreateRequest{}
	if err := r.Client.Get(ctx, req.NamespacedName, crr); err != nil {
		if apierrors.IsNotFound(err) {
			r.forgetDaemon(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, fmt.Errorf("get ContainerRecreateRequest %s: %w", req, err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("pod", crr.Spec.PodName)
	ctx = ctrl.LoggerInto(ctx, log)
	r.countCreated(crr)
	if crr.Status.Phase == v1beta1.PhaseCompleted {
		r.forgetDaemon(req.NamespacedName)
		return r.finish(ctx, crr)
	}
	return r.watchOver(ctx, crr)
}

// watchOver ends a running request that cannot complete, holds the pod
// not ready for the unready grace, and warns about a missing daemon.
func (r *Reconciler) watchOver(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) (ctrl.Result, error) {
	now := r.Clock.Now()
	r.noteDaemon(crr, now)
	pod, err := r.requestPod(ctx, crr)
	switch {
	case err != nil:
		return ctrl.Result{}, err
	case pod == nil:
		return ctrl.Result{}, r.end(ctx, crr, fmt.Sprintf("pod %s was deleted before its containers were recreated", crr.Spec.PodName))
	case replaced(crr, pod):
		return ctrl.Result{}, r.end(ctx, crr, fmt.Sprintf("pod %s was replaced (UID %s, the request was for %s)", pod.Name, pod.UID, crr.Labels[v1beta1.PodUIDLabel]))
	case pod.DeletionTimestamp != nil:
		// The kubelet is stopping the pod, its preStop hooks first: a
		// container stopped now would not come back, and a second preStop
		// would run on a pod that is draining. The daemon touches no
		// terminating pod either.
		return ctrl.Result{}, r.end(ctx, crr, podDeletingMessage)
	}
	paused, err := r.Pause.Read(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	if paused.Paused && (paused.EndRequests || !begun(crr)) {
		return ctrl.Result{}, r.end(ctx, crr, paused.Cause)
	}
	var wake []time.Duration
	if deadline, ok := crr.Deadline(); ok {
		if !now.Before(deadline) {
			return ctrl.Result{}, r.end(ctx, crr, fmt.Sprintf("activeDeadlineSeconds (%ds) passed", *crr.Spec.ActiveDeadlineSeconds))
		}
		wake = append(wake, deadline.Sub(now))
	}
	lost, wait, err := r.nodeLost(ctx, crr.Labels[v1beta1.NodeNameLabel], now)
	if err != nil {
		return ctrl.Result{}, err
	}
	if alive := r.daemonAlive(crr, now); lost != "" && alive > 0 {
		// The node reads lost, yet a daemon is at work on the request.
		lost, wait = "", alive
	}
	if lost != "" {
		return ctrl.Result{}, r.end(ctx, crr, lost)
	}
	if wait > 0 {
		wake = append(wake, wait)
	}
	// What this pass finds is written once.
	status := crr.Status.DeepCopy()
	if err := r.holdUnready(ctx, crr, pod, status); err != nil {
		return ctrl.Result{}, err
	}
	r.announceStart(crr, pod)
	if wait := r.checkPickup(ctx, crr, status, now); wait > 0 {
		wake = append(wake, wait)
	}
	if err := r.writeWatch(ctx, crr, status); err != nil {
		if apierrors.IsConflict(err) {
			// The daemon wrote the request meanwhile: a prompt look at it
			// as it now is, not an error.
			return ctrl.Result{RequeueAfter: 100 * time.Millisecond}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: v1beta1.SoonestWake(wake)}, nil
}

// requestPod reads the request's pod, nil when it is gone. The cache may be
// behind: a pod it misses or holds in an older incarnation is read again
// from the API server before the request is ended for it.
func (r *Reconciler) requestPod(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) (*corev1.Pod, error) {
	key := types.NamespacedName{Namespace: crr.Namespace, Name: crr.Spec.PodName}
	pod := &corev1.Pod{}
	err := r.Client.Get(ctx, key, pod)
	switch {
	case err == nil && !replaced(crr, pod):
		return pod, nil
	case err != nil && !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get pod %s: %w", key, err)
	}
	live := &corev1.Pod{}
	if err := r.Reader.Get(ctx, key, live); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("confirm pod %s with the API server: %w", key, err)
	}
	return live, nil
}

// replaced reports whether pod is not the one the request was made for.
func replaced(crr *v1beta1.ContainerRecreateRequest, pod *corev1.Pod) bool {
	uid := crr.Labels[v1beta1.PodUIDLabel]
	return uid != "" && uid != string(pod.UID)
}

// nodeLost says why the node counts as lost, or how long until it would.
// A node the cache shows lost is read again from the API server before
// the request is ended for it: the cache may be behind a node that is
// back.
func (r *Reconciler) nodeLost(ctx context.Context, nodeName string, now time.Time) (string, time.Duration, error) {
	why, wait, err := r.nodeVerdict(ctx, r.Client, nodeName, now)
	if why == "" || err != nil {
		return why, wait, err
	}
	return r.nodeVerdict(ctx, r.Reader, nodeName, now)
}

// nodeVerdict is nodeLost from what reader holds.
func (r *Reconciler) nodeVerdict(ctx context.Context, reader client.Reader, nodeName string, now time.Time) (string, time.Duration, error) {
	if nodeName == "" {
		return "", 0, nil
	}
	node := &corev1.Node{}
	err := reader.Get(ctx, types.NamespacedName{Name: nodeName}, node)
	var since time.Time
	var why string
	switch {
	case apierrors.IsNotFound(err):
		r.mu.Lock()
		if _, ok := r.nodeGoneSince[nodeName]; !ok {
			r.nodeGoneSince[nodeName] = now
		}
		since = r.nodeGoneSince[nodeName]
		r.mu.Unlock()
		why = fmt.Sprintf("node %s was deleted", nodeName)
	case err != nil:
		return "", 0, fmt.Errorf("get node %s: %w", nodeName, err)
	default:
		r.mu.Lock()
		delete(r.nodeGoneSince, nodeName)
		r.mu.Unlock()
		ready := nodeReadyCondition(node)
		if ready == nil || ready.Status == corev1.ConditionTrue {
			return "", 0, nil
		}
		since = ready.LastTransitionTime.Time
		why = fmt.Sprintf("node %s is NotReady (%s)", nodeName, ready.Reason)
	}
	lostAt := since.Add(r.NodeLostGrace)
	if now.Before(lostAt) {
		return "", lostAt.Sub(now), nil
	}
	return fmt.Sprintf("%s for more than %s; no daemon can finish the request", why, r.NodeLostGrace), 0, nil
}

func nodeReadyCondition(node *corev1.Node) *corev1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == corev1.NodeReady {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}
