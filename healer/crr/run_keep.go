package crr

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	rejuvv1alpha1 "github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// A policy's run counts the pods it recreated from its requests: a pod
// whose containers started again since the run began counts as recreated
// by the run when one of the run's requests for it is there, else as
// started again by something else. A request deleted at the end of a TTL
// shorter than the run would make the run report its own recreation as
// someone else's, so a run's requests are kept past their TTL until the
// run is no longer Running.

// runKeepRecheck is how often a request kept for its run looks at the run
// again.
const runKeepRecheck = 10 * time.Second

// keptForRun says whether crr was made by a run of the policy that
// controls it, and that run is still Running.
func (r *Reconciler) keptForRun(ctx context.Context, crr *v1beta1.ContainerRecreateRequest) (bool, error) {
	run := crr.Annotations[v1beta1.RunAnnotation]
	owner := rejuvv1alpha1.ControllingPolicy(crr)
	if run == "" || owner == nil {
		return false, nil
	}
	p := &rejuvv1alpha1.RecreatePolicy{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: crr.Namespace, Name: owner.Name}, p); err != nil {
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return false, fmt.Errorf("get RecreatePolicy %s/%s, whose run made ContainerRecreateRequest %s: %w", crr.Namespace, owner.Name, crr.Name, err)
	}
	cur := p.Status.Run
	return p.UID == owner.UID && cur != nil && cur.State == rejuvv1alpha1.RunRunning &&
		cur.ScheduledTime.UTC().Format(time.RFC3339) == run, nil
}
