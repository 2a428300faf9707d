package scale

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/test/images"
)

// The real node's requests the stand-in's delays are drawn from: restart
// pods of restartContainers containers each, one request per container.
const (
	restartNamespace  = "scale-restarts"
	restartSamples    = 10
	restartContainers = 5
)

// measureRestarts times restartSamples requests on the real node, one
// at a time, each for a container of its own (the kubelet's back-off
// never applies): from the create call to Completed as the benchmark
// sees it, through the webhook, the real daemon, containerd and the
// kubelet. These are what the stand-in's restarts take.
func measureRestarts(ctx context.Context, node string) ([]time.Duration, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: restartNamespace}}
	if err := stack.Client.Create(ctx, ns); client.IgnoreAlreadyExists(err) != nil {
		return nil, fmt.Errorf("create namespace %s: %w", restartNamespace, err)
	}
	type target struct{ pod, container string }
	var targets []target
	for p := range (restartSamples + restartContainers - 1) / restartContainers {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: restartNamespace, Name: fmt.Sprintf("real-%d", p)},
			Spec:       corev1.PodSpec{NodeName: node, TerminationGracePeriodSeconds: new(int64(2))},
		}
		for i := range restartContainers {
			name := fmt.Sprintf("c%d", i)
			pod.Spec.Containers = append(pod.Spec.Containers, corev1.Container{
				Name: name, Image: images.TestApp.Ref(),
				Args: []string{fmt.Sprintf("--listen=:%d", 8080+i)},
			})
			targets = append(targets, target{pod.Name, name})
		}
		if err := stack.Client.Create(ctx, pod); err != nil {
			return nil, fmt.Errorf("create pod %s/%s on the real node: %w", restartNamespace, pod.Name, err)
		}
	}
	var took []time.Duration
	for i, t := range targets[:restartSamples] {
		if err := waitAllRunning(ctx, t.pod); err != nil {
			return nil, err
		}
		crr := &v1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{Namespace: restartNamespace, Name: fmt.Sprintf("sample-%02d", i)},
			Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: t.pod, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: t.container}}},
		}
		start := time.Now()
		if err := stack.Client.Create(ctx, crr); err != nil {
			return nil, fmt.Errorf("create request %s for %s/%s: %w", crr.Name, t.pod, t.container, err)
		}
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			if err := stack.Client.Get(ctx, client.ObjectKeyFromObject(crr), crr); err != nil {
				return false, nil
			}
			return crr.Status.Phase == v1beta1.PhaseCompleted, nil
		})
		if err != nil {
			return nil, fmt.Errorf("request %s on the real node not Completed: %w", crr.Name, err)
		}
		if crr.Status.Result != v1beta1.ResultSucceeded {
			return nil, fmt.Errorf("request %s on the real node ended %s: %s", crr.Name, crr.Status.Result, crr.Status.Message)
		}
		took = append(took, time.Since(start))
	}
	if err := stack.Client.Delete(ctx, ns); client.IgnoreNotFound(err) != nil {
		return nil, fmt.Errorf("delete namespace %s: %w", restartNamespace, err)
	}
	return took, nil
}

// waitAllRunning waits until every container of the pod runs.
func waitAllRunning(ctx context.Context, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pod := &corev1.Pod{}
		if err := stack.Client.Get(ctx, client.ObjectKey{Namespace: restartNamespace, Name: name}, pod); err != nil {
			return false, nil
		}
		running := 0
		for _, cs := range pod.Status.ContainerStatuses {
			if cs.State.Running != nil && cs.Ready {
				running++
			}
		}
		return running == len(pod.Spec.Containers), nil
	})
	if err != nil {
		return fmt.Errorf("pod %s/%s on the real node not running: %w", restartNamespace, name, err)
	}
	return nil
}

// quantile is the q-quantile (0 to 1) of ds by nearest rank; 0 for none.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(ds))
	rank := int(math.Ceil(q * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}
