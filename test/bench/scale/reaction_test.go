package scale

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// The reaction measurement: in its own namespace, reactSamples pods of one
// Deployment and a policy whose rule recreates a running container that is
// not ready. One pod at a time (each pod once, so that no cooldown or
// history of an earlier recreation plays a part), the benchmark turns its
// app container and the pod not ready, as the kubelet does when a
// readiness probe fails, and times until the request for that pod arrives
// at the stand-in's watch. Meanwhile fleet pods are deleted at
// churnPerSecond (their Deployments create new ones): the cluster is busy.
const (
	reactNamespace = "scale-react"
	reactSamples   = 30
	churnPerSecond = 5
	reactTimeout   = time.Minute
)

// notReadyRule recreates a running container that is not ready, at once.
const notReadyRule = `package scale
import rego.v1
recreate contains {"container": c.name, "reason": "not ready"} if {
	some c in input.containers
	c.state == "running"
	not c.ready
}
`

func reactPolicy() *v1alpha1.RecreatePolicy {
	return &v1alpha1.RecreatePolicy{
		ObjectMeta: metav1.ObjectMeta{Namespace: reactNamespace, Name: "not-ready"},
		Spec: v1alpha1.RecreatePolicySpec{
			Selector:   metav1.LabelSelector{MatchLabels: map[string]string{fleetLabel: fleetValue}},
			Containers: []string{"app"},
			Rules:      []v1alpha1.Rule{{Name: "not-ready", Rego: notReadyRule}},
			Rollout:    v1alpha1.Rollout{MaxUnavailable: new(intstr.FromString("50%"))},
		},
	}
}

// reaction is what the measurement found: the latencies, and how many
// fleet pods it deleted meanwhile.
type reaction struct {
	latencies []time.Duration
	churned   int
	parts     reactionParts
	// writes are the benchmark's own writes of the pods' status.
	writes []time.Duration
	// delivered are the times from those writes to their arrival at the
	// benchmark's own watch of the pods.
	delivered []time.Duration
}

// measureReaction runs the samples against the stand-in, with churn.
func measureReaction(ctx context.Context, s *standIn) (reaction, error) {
	var r reaction
	if err := workload(ctx, reactNamespace, reactPolicy(), []int32{reactSamples}); err != nil {
		return r, err
	}
	probes, err := fleet.CoreV1().Pods(reactNamespace).List(ctx, metav1.ListOptions{LabelSelector: fleetLabel + "=" + fleetValue})
	if err != nil {
		return r, fmt.Errorf("list the pods of %s: %w", reactNamespace, err)
	}
	before, err := readManagerTimes(ctx)
	if err != nil {
		return r, err
	}
	cctx, stopChurn := context.WithCancel(ctx)
	var wg sync.WaitGroup
	churned := 0
	wg.Go(func() { churned = churn(cctx) })
	d := watchDeliveries(cctx, reactNamespace, probes.ResourceVersion)
	err = sample(ctx, s, d, probes.Items, &r)
	stopChurn()
	wg.Wait()
	r.churned = churned
	if err != nil {
		return r, err
	}
	after, err := readManagerTimes(ctx)
	r.parts = partsBetween(before, after)
	return r, err
}

// sample makes each pod not ready in turn and records how long until its
// request arrived, and how long until its change arrived at d.
func sample(ctx context.Context, s *standIn, d *deliveries, probes []corev1.Pod, r *reaction) error {
	for i := range probes {
		p := &probes[i]
		time.Sleep(200*time.Millisecond + time.Duration(rand.IntN(1000))*time.Millisecond)
		changed, took, err := makeUnready(ctx, p)
		if err != nil {
			return err
		}
		r.writes = append(r.writes, took)
		arrived, err := firstSeen(ctx, s.seenAt, p.UID)
		if err != nil {
			return fmt.Errorf("no request for pod %s/%s within %s of its readiness change", p.Namespace, p.Name, reactTimeout)
		}
		r.latencies = append(r.latencies, arrived.Sub(changed))
		// The request came after the manager saw the change, so this
		// watch, which the same API server serves, has it or is about to.
		delivered, err := firstSeen(ctx, d.of, p.UID)
		if err != nil {
			return fmt.Errorf("the benchmark's watch of %s did not get pod %s not ready within %s of the change", p.Namespace, p.Name, reactTimeout)
		}
		r.delivered = append(r.delivered, delivered.Sub(changed))
	}
	return nil
}

// firstSeen waits up to reactTimeout for seen to know when the pod was
// seen, and returns that time.
func firstSeen(ctx context.Context, seen func(types.UID) (time.Time, bool), uid types.UID) (time.Time, error) {
	var at time.Time
	err := wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, reactTimeout, true, func(context.Context) (bool, error) {
		t, ok := seen(uid)
		at = t
		return ok, nil
	})
	return at, err
}

// makeUnready writes the pod's status as the kubelet does when the app
// container's readiness probe fails, and returns when the call started:
// the change is stored somewhere before it returns, so the latency counted
// from the start is never too short; and how long the write took (what
// a write to the API server takes meanwhile).
func makeUnready(ctx context.Context, p *corev1.Pod) (time.Time, time.Duration, error) {
	p = p.DeepCopy()
	for i := range p.Status.ContainerStatuses {
		if cs := &p.Status.ContainerStatuses[i]; cs.Name == "app" {
			cs.Ready = false
		}
	}
	setReady(p, metav1.Now())
	// No resourceVersion: the write is the kubelet's, whatever else
	// changed the pod since the benchmark listed it.
	patch, err := statusPatch(p, "")
	if err != nil {
		return time.Time{}, 0, err
	}
	start := time.Now()
	if _, err := fleet.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		return time.Time{}, 0, fmt.Errorf("make pod %s/%s not ready: %w", p.Namespace, p.Name, err)
	}
	return start, time.Since(start), nil
}

// churn deletes a random fleet pod churnPerSecond times a second until ctx
// ends, and returns how many it deleted.
func churn(ctx context.Context) int {
	tick := time.NewTicker(time.Second / churnPerSecond)
	defer tick.Stop()
	deleted := 0
	for {
		select {
		case <-ctx.Done():
			return deleted
		case <-tick.C:
		}
		ns := fleetNamespace(rand.IntN(sizing.namespaces))
		list, err := fleet.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: fleetLabel + "=" + fleetValue, ResourceVersion: "0"})
		if err != nil || len(list.Items) == 0 {
			continue
		}
		p := list.Items[rand.IntN(len(list.Items))]
		if fleet.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}) == nil {
			deleted++
		}
	}
}
