package invariant

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// anHourOfRuns feeds c an hour of a 50-pod workload: a pod event per pod
// every 5 seconds, and every 10 minutes a rolling run of all pods in
// batches of 5 (maxUnavailable 10%), each batch 8 seconds. It returns how
// many observations it made.
func anHourOfRuns(c *Checker) int {
	const pods, batch, every = 50, 5, 600
	pol := newPolicy("nightly", "10%")
	var ps []*corev1.Pod
	for i := range pods {
		ps = append(ps, newPod(fmt.Sprintf("web-%02d", i)))
	}
	n := 0
	observe := func(o Observation) {
		c.Observe(o)
		n++
	}
	requests := map[int]*v1beta1.ContainerRecreateRequest{}
	for sec := range 3600 {
		t := at(float64(sec))
		if sec == 0 {
			observe(PolicySeen{At: t, Policy: pol.DeepCopy()})
		}
		run, into := sec/every, sec%every-10
		busy := map[int]bool{}
		if b, phase := into/8, into%8; into >= 0 && b < pods/batch {
			for i := b * batch; i < (b+1)*batch; i++ {
				busy[i] = true
				p := ps[i]
				switch phase {
				case 0:
					requests[i] = inRun(newRequest(fmt.Sprintf("run%d-%s", run, p.Name), p, pol), at(float64(run*every+10)))
					observe(RequestSeen{At: t, Request: requests[i].DeepCopy()})
				case 1:
					setInService(p, false)
					setReady(p, false)
					observe(PodSeen{At: t, Pod: p.DeepCopy()})
				case 3:
					restartContainer(p, "app")
					observe(PodSeen{At: t, Pod: p.DeepCopy()})
				case 6:
					complete(requests[i], v1beta1.ResultSucceeded)
					observe(RequestSeen{At: t, Request: requests[i].DeepCopy()})
				case 7:
					setInService(p, true)
					setReady(p, true)
					observe(PodSeen{At: t, Pod: p.DeepCopy()})
				}
			}
			if b == pods/batch-1 && phase == 7 {
				done := completed(pol.DeepCopy(), float64(run*every+10), pods)
				observe(PolicySeen{At: t.Add(time.Second), Policy: done})
			}
		}
		for i, p := range ps {
			if (sec+i)%5 == 0 && !busy[i] {
				observe(PodSeen{At: t, Pod: p.DeepCopy()})
			}
		}
	}
	return n
}

func TestAnHourOfRunsIsQuiet(t *testing.T) {
	c := NewChecker(DefaultSlack(), nil)
	began := time.Now()
	n := anHourOfRuns(c)
	rep := c.Finish(at(3600))
	took := time.Since(began)
	quiet(t, rep)
	if rep.Requests != 300 || rep.Succeeded != 300 || rep.RunsCompleted != 6 || rep.Restarts != 300 {
		t.Errorf("requests %d succeeded %d runs %d restarts %d, want 300, 300, 6, 300", rep.Requests, rep.Succeeded, rep.RunsCompleted, rep.Restarts)
	}
	t.Logf("%d observations in %s", n, took)
}

func BenchmarkAnHourOfRuns(b *testing.B) {
	for b.Loop() {
		c := NewChecker(DefaultSlack(), nil)
		anHourOfRuns(c)
		c.Finish(at(3600))
	}
}
