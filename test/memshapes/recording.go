package memshapes

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/healer/backtest"
	"github.com/rejuv-dev/rejuv/healer/workingset"
)

// FirstSample is how far into its life a replay of seed samples a shape
// first: samples come some moment into each interval, as a source's do.
func FirstSample(seed uint64) time.Duration {
	return time.Second + time.Duration(seed*7%29)*time.Second
}

// Recording is one replay of a shape as history would hold it: a pod
// labelled app=shape and shape=<its name>, its container app's instances
// (the kernel ends one each time the working set reaches the limit, and
// the kubelet starts the next at once) and the working set sampled every
// workingset.DefaultInterval, from FirstSample(seed) after start until the
// shape's time is over.
type Recording struct {
	Shape   Shape
	Seed    uint64
	Pod     backtest.Pod
	Samples []workingset.Sample
}

// Record is shape s's replay with seed, its pod started at start.
func Record(s Shape, seed uint64, start time.Time) Recording {
	name := fmt.Sprintf("%s-%d", PodName(s), seed)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shapes", Name: name, UID: types.UID("shape-" + name),
			Labels: map[string]string{"app": "shape", "shape": PodName(s)}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "shapes/app:1",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(s.Limit, resource.BinarySI)}}}}},
	}
	rec := Recording{Shape: s, Seed: seed, Pod: backtest.Pod{Pod: pod, From: start}}
	instances := []backtest.Instance{{ID: instanceID(name, 0), Started: start}}
	for at := start.Add(FirstSample(seed)); at.Sub(start) <= s.For; {
		cur := &instances[len(instances)-1]
		bytes := s.Bytes(Moment{Age: at.Sub(cur.Started), Instance: len(instances) - 1, Seed: seed})
		if bytes >= s.Limit {
			cur.Ended, cur.Reason, cur.ExitCode = at, backtest.OOMKilled, 137
			instances = append(instances, backtest.Instance{ID: instanceID(name, len(instances)), Started: at})
			continue
		}
		rec.Samples = append(rec.Samples, workingset.Sample{Pod: name, Container: "app", ContainerID: cur.ID, Time: at, Bytes: bytes})
		at = at.Add(workingset.DefaultInterval)
	}
	rec.Pod.Containers = []backtest.Container{{Name: "app", Instances: instances}}
	// The pod is gone after its last sample, which a pass judges last.
	rec.Pod.To = rec.Samples[len(rec.Samples)-1].Time.Add(time.Nanosecond)
	return rec
}

// PodName is the shape's name as a pod's name and a label's value.
func PodName(s Shape) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, s.Name)
}

// instanceID is the runtime's ID of a recorded pod's instance n: 64 hex
// digits, as cAdvisor's cgroup paths name it.
func instanceID(pod string, n int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%d", pod, n))
	return hex.EncodeToString(sum[:])
}
