package executor

import (
	"sort"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// queuedMessage is the message of a request waiting for an earlier one of
// its pod. It does not name the one running: a status that named the head
// would be written again for every request queued behind it each time the
// head changes, n²/2 writes for n requests.
const queuedMessage = "queued behind an earlier ContainerRecreateRequest of the same pod (one runs at a time, oldest first)"

// head returns the request that may run on a pod: the oldest one not yet
// completed (by creation time, then name, so that requests created in the
// same second keep a stable order).
func head(reqs []*v1beta1.ContainerRecreateRequest) *v1beta1.ContainerRecreateRequest {
	var open []*v1beta1.ContainerRecreateRequest
	for _, r := range reqs {
		if r.Status.Phase != v1beta1.PhaseCompleted && r.DeletionTimestamp == nil {
			open = append(open, r)
		}
	}
	if len(open) == 0 {
		return nil
	}
	sort.Slice(open, func(i, j int) bool {
		a, b := open[i], open[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		return a.Name < b.Name
	})
	return open[0]
}
