package executor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// RuntimeSource gives the runtime client once the daemon has found it.
type RuntimeSource interface {
	Client() *cri.Client
}

// Store reads the daemon's caches, which hold only its node's requests and
// pods. Objects it returns are shared: never change them.
type Store interface {
	Request(namespace, name string) (*v1beta1.ContainerRecreateRequest, bool)
	Pod(namespace, name string) (*corev1.Pod, bool)
	RequestsOfPod(namespace, uid string) []*v1beta1.ContainerRecreateRequest
}

// StatusWriter writes a request's status.
type StatusWriter interface {
	UpdateRequestStatus(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) (*v1beta1.ContainerRecreateRequest, error)
}

// Recorder records events on the request and its pod.
type Recorder = v1beta1.EventRecorder

// LivePods reads a pod from the API server, not from the cache.
type LivePods interface {
	GetPod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
}

// Executor runs the ContainerRecreateRequests of one node.
type Executor struct {
	Store Store
	// Live confirms, before the first stop of a request with an unready
	// grace, that the pod is out of service as the cache says (a cache
	// that lags may show the readiness of an earlier moment); nil trusts
	// the cache.
	Live     LivePods
	Status   StatusWriter
	Runtime  RuntimeSource
	NodeName string
	Clock    clock.PassiveClock
	Recorder Recorder

	// stops remembers the containers this daemon stopped, by request UID
	// and container name, until the request completes or goes: a pass
	// whose write of a stop was refused, or that reads a copy of the
	// request older than that write, still knows the container was
	// stopped, and does not stop its successor. A restart of the daemon
	// forgets it; the status written after each stop is what survives.
	stops sync.Map

	// stopping holds, by stopKey, the containers whose stop runs now. A
	// stop waits for the container to exit, which takes the whole grace
	// period when it ignores SIGTERM (up to a day): it runs in a
	// goroutine of its own, never in a worker, so that one namespace's
	// long stops cannot hold the workers every namespace's requests need.
	stopping sync.Map
	// requeue looks at a pod's requests again once a stop has returned
	// (rate-limited when it failed). Run sets it; without it (a single
	// pass, as in tests) a pass waits for its stops itself.
	requeue func(key podKey, failed bool)
	// background counts the stops running in their own goroutines.
	background sync.WaitGroup
}

// stopRecord is one container this daemon stopped.
type stopRecord struct {
	at    time.Time
	timed atomic.Bool // the kubelet's restart after it has been measured
}

// stopKey names a container of a request in stops.
func stopKey(uid types.UID, container string) string {
	return string(uid) + "/" + container
}

// stopped says whether this daemon stopped the container for the request.
func (e *Executor) stopped(crr *v1beta1.ContainerRecreateRequest, container string) (*stopRecord, bool) {
	r, ok := e.stops.Load(stopKey(crr.UID, container))
	if !ok {
		return nil, false
	}
	return r.(*stopRecord), true
}

// forget drops what stops holds of a request that completed or went.
func (e *Executor) forget(uid types.UID) {
	e.stops.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), string(uid)+"/") {
			e.stops.Delete(k)
		}
		return true
	})
}

// Result says when to look at a request again; zero for when something
// changes.
type Result struct {
	RequeueAfter time.Duration
}

// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests,verbs=get;list;watch
// +kubebuilder:rbac:groups=apps.kruise.io,resources=containerrecreaterequests/status,verbs=get;update;patch
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch

// writeStatus applies change to a copy of the status and writes it when it
// changed, with the request's resourceVersion (a conflict is retried).
func (e *Executor) writeStatus(ctx context.Context, crr *v1beta1.ContainerRecreateRequest, change func(*v1beta1.ContainerRecreateRequestStatus)) error {
	updated := crr.DeepCopy()
	change(&updated.Status)
	if equality.Semantic.DeepEqual(updated.Status, crr.Status) {
		return nil
	}
	stored, err := e.Status.UpdateRequestStatus(ctx, updated)
	if err != nil {
		return fmt.Errorf("update status of ContainerRecreateRequest %s/%s: %w", crr.Namespace, crr.Name, err)
	}
	*crr = *stored
	return nil
}
