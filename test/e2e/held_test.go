package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/pods"
)

// servedRequests is what watchHeldIdle saw of a namespace's pods and
// requests.
type servedRequests struct {
	// held is how long each pod was seen out of service (its
	// KruisePodReady condition False), and idle the longest of those
	// times during which none of its requests was being executed
	// (phase Recreating).
	held, idle map[string]time.Duration
	// seen and started are when each request was first seen, and first
	// seen Recreating.
	seen, started map[string]time.Time
}

func (s servedRequests) String() string {
	var lines []string
	for pod, d := range s.held {
		lines = append(lines, fmt.Sprintf("pod %s held %s (idle at most %s)", pod, d.Round(100*time.Millisecond), s.idle[pod].Round(100*time.Millisecond)))
	}
	for crr, at := range s.started {
		lines = append(lines, fmt.Sprintf("request %s seen executed %s after it was first seen", crr, at.Sub(s.seen[crr]).Round(100*time.Millisecond)))
	}
	sort.Strings(lines)
	return strings.Join(lines, "; ")
}

// watchHeldIdle samples the pods and requests of ns every 200 ms until
// stop is called, and stop returns what it saw. The sampling goroutine
// alone writes what it sees, and stop waits for it to end.
func watchHeldIdle(c client.Client, ns string) (stop func() servedRequests) {
	ctx := context.Background()
	seen := servedRequests{held: map[string]time.Duration{}, idle: map[string]time.Duration{},
		seen: map[string]time.Time{}, started: map[string]time.Time{}}
	heldBefore := map[string]bool{}
	idleSince := map[string]time.Time{}
	last := time.Now()
	stopSampling := every(200*time.Millisecond, func() {
		podList := &corev1.PodList{}
		crrs := &v1beta1.ContainerRecreateRequestList{}
		if c.List(ctx, podList, client.InNamespace(ns)) != nil || c.List(ctx, crrs, client.InNamespace(ns)) != nil {
			return
		}
		now := time.Now()
		executing := map[string]bool{}
		for _, crr := range crrs.Items {
			if _, ok := seen.seen[crr.Name]; !ok {
				seen.seen[crr.Name] = now
			}
			if crr.Status.Phase == v1beta1.PhaseRecreating {
				executing[crr.Spec.PodName] = true
				if _, ok := seen.started[crr.Name]; !ok {
					seen.started[crr.Name] = now
				}
			}
		}
		for i := range podList.Items {
			p := &podList.Items[i]
			gate := pods.Condition(p, v1beta1.PodReadyCondition)
			if gate == nil || gate.Status != corev1.ConditionFalse {
				delete(heldBefore, p.Name)
				delete(idleSince, p.Name)
				continue
			}
			if heldBefore[p.Name] {
				seen.held[p.Name] += now.Sub(last)
			} else {
				heldBefore[p.Name] = true
				seen.held[p.Name] += 0
			}
			if executing[p.Name] {
				delete(idleSince, p.Name)
				continue
			}
			if since, ok := idleSince[p.Name]; !ok {
				idleSince[p.Name] = now
			} else if d := now.Sub(since); d > seen.idle[p.Name] {
				seen.idle[p.Name] = d
			}
		}
		last = now
	})
	return func() servedRequests {
		stopSampling()
		return seen
	}
}
