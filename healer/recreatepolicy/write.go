package recreatepolicy

import (
	"context"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// A pass writes the status only when it says something new: in a busy
// namespace every pod's change starts a pass, and a write each time was
// most of the manager's API requests at thousands of pods. A pass whose
// only change is lastEvaluationTime writes it once an evaluation interval
// (so the time is at most one interval old, as with a quiet namespace's
// periodic passes).

// statusWriteNeeded says whether the pass must write p's status, computed
// from original as read from the cache; lastWrite is the resourceVersion
// the policy's last status write returned ("" for none). It puts back the
// written lastEvaluationTime when it is the only change and is younger
// than interval. It always writes when the cache has not caught up with
// the pass's own last write: the status there may differ from original's.
func statusWriteNeeded(lastWrite string, original, p *v1alpha1.RecreatePolicy, interval time.Duration, now time.Time) bool {
	if lastWrite != "" && lastWrite != original.ResourceVersion {
		return true
	}
	was, is := original.Status.LastEvaluationTime, p.Status.LastEvaluationTime
	if was != nil && is != nil && now.Sub(was.Time) < interval {
		p.Status.LastEvaluationTime = was
		if equality.Semantic.DeepEqual(original.Status, p.Status) {
			return false
		}
		p.Status.LastEvaluationTime = is
		return true
	}
	return !equality.Semantic.DeepEqual(original.Status, p.Status)
}

// writeStatus writes the status a pass built in p, computed from original
// as read, with the pass's decisions at the head of its list, when it says
// something new (see statusWriteNeeded; interval is the policy's
// evaluation interval, 0 when it has none).
func (r *Reconciler) writeStatus(ctx context.Context, original, p *v1alpha1.RecreatePolicy, decided []v1alpha1.Decision, interval time.Duration, now time.Time) error {
	key := types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
	flush(p, decided)
	if !statusWriteNeeded(r.state.lastWrite(key), original, p, interval, now) {
		return nil
	}
	err := r.patchStatus(ctx, original, p)
	if !apierrors.IsConflict(err) {
		return r.notWritten(p, err)
	}
	// Our previous write is newer than the cached copy this status was
	// computed from: write it again on top of that write, keeping its
	// decisions below ours.
	latest := &v1alpha1.RecreatePolicy{}
	if err := r.Reader.Get(ctx, key, latest); err != nil {
		return r.notWritten(p, fmt.Errorf("read RecreatePolicy %s again: %w", key, err))
	}
	retry := latest.DeepCopy()
	retry.Status = p.Status
	retry.Status.RecentDecisions = latest.Status.RecentDecisions
	flush(retry, decided)
	return r.notWritten(retry, r.patchStatus(ctx, latest, retry))
}

// What a pass did lives in the status it writes: the restart it handled
// (restartedAt), the run it started and carried on, the halts that keep
// a runaway rule from being evaluated again. A status that cannot be
// written (a write refused, the API server away) must not undo them, or
// the next pass would start the same run again and recreate every pod
// once more, and evaluate a quarantined rule again. So the status is kept
// in this process until a write goes through, and each pass starts from
// it; each failed write is a Warning event that says why. A manager that
// restarts meanwhile starts from what was last written.

// carryUnwritten starts a pass from the status of p that its last pass
// could not write, if any, rather than from the one read.
func (r *Reconciler) carryUnwritten(p *v1alpha1.RecreatePolicy) {
	if status, ok := r.state.unwritten(p); ok {
		p.Status = *status
	}
}

// notWritten keeps the status of p when err says it could not be written,
// and reports it; it returns err.
func (r *Reconciler) notWritten(p *v1alpha1.RecreatePolicy, err error) error {
	if err == nil {
		return nil
	}
	r.state.notWritten(p)
	r.eventf(p, nil, corev1.EventTypeWarning, "StatusWriteFailed", "WriteStatus",
		"the status could not be written, this manager carries it to the next passes until it is: %v", err)
	return err
}

// patchStatus patches the status once, against the object as read. The
// patch carries the resourceVersion read, so a status computed from a stale
// copy (the cache behind the previous reconcile's write) is refused rather
// than overwriting that write's decisions and run.
func (r *Reconciler) patchStatus(ctx context.Context, original, p *v1alpha1.RecreatePolicy) error {
	err := r.Client.Status().Patch(ctx, p, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{}))
	switch {
	case err == nil:
		r.state.wrote(p)
		return nil
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return err
	}
	return fmt.Errorf("write the status of RecreatePolicy %s/%s: %w", p.Namespace, p.Name, err)
}

// flush puts the new decisions at the head of the status list, the
// reasons and messages of all cut to their bound. A decision
// that repeats the outcome of the latest one for the same pod and trigger
// (a candidate held back at every evaluation, its message saying how long
// ago the last recreation was) replaces it rather than pushing older ones
// out.
func flush(p *v1alpha1.RecreatePolicy, decided []v1alpha1.Decision) {
	list := p.Status.RecentDecisions
	for _, dec := range decided {
		// Cut at once: a decision past the last kept never comes back
		// (each prepend moves the others back by one, and takes at most
		// one out), and a pass over a run of a thousand pods has as many
		// decisions, which would otherwise be copied on each prepend.
		list = prepend(list, dec)
		if len(list) > v1alpha1.MaxRecentDecisions {
			list = list[:v1alpha1.MaxRecentDecisions]
		}
	}
	p.Status.RecentDecisions = bounded(list)
}

// bounded returns the decisions with their reasons and messages cut to
// their bound: those of this pass, and those of a status written before
// the schema bounded them, which it would now refuse with the rest of the
// list. The list is copied when one is cut: it may be the one read.
func bounded(list []v1alpha1.Decision) []v1alpha1.Decision {
	var out []v1alpha1.Decision
	for i, d := range list {
		reason, msg := v1alpha1.Truncate(d.Reason, v1alpha1.MaxReasonLength), v1alpha1.Truncate(d.Message, v1alpha1.MaxReasonLength)
		if reason == d.Reason && msg == d.Message {
			continue
		}
		if out == nil {
			out = slices.Clone(list)
		}
		out[i].Reason, out[i].Message = reason, msg
	}
	if out == nil {
		return list
	}
	return out
}

func prepend(list []v1alpha1.Decision, dec v1alpha1.Decision) []v1alpha1.Decision {
	for i := range list {
		if list[i].Pod == dec.Pod && list[i].Trigger == dec.Trigger {
			if list[i].Outcome == dec.Outcome && dec.Outcome != v1alpha1.OutcomeCreated {
				list = append(list[:i:i], list[i+1:]...)
			}
			break
		}
	}
	return append([]v1alpha1.Decision{dec}, list...)
}
