package memshapes

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/healer/backtest"
	"github.com/rejuv-dev/rejuv/healer/workingset"
)

// Week lays the recordings of every shape of the catalogue with seeds
// seeds out over the week that ends at end: their pods start one after the
// other, spread over the days before end less the longest shape's time,
// each first sampled on the 30 s grid of end, so that a backtest whose
// passes are on that grid evaluates at the samples' times, as the
// catalogue's replay does.
func Week(end time.Time, seeds uint64) History {
	shapes := Catalogue()
	longest := time.Duration(0)
	for _, s := range shapes {
		longest = max(longest, s.For)
	}
	start := end.Add(-7 * 24 * time.Hour)
	n := uint64(len(shapes)) * seeds
	spread := end.Sub(start) - longest - time.Hour
	var h History
	i := uint64(0)
	for _, s := range shapes {
		for seed := range seeds {
			first := start.Add(time.Hour + time.Duration(i)*(spread/time.Duration(n))).Truncate(workingset.DefaultInterval)
			h = append(h, Record(s, seed, first.Add(-FirstSample(seed))))
			i++
		}
	}
	return h
}

// WriteOpenMetrics writes the recordings as OpenMetrics text for
// promtool's backfill, as a Prometheus scraping the kubelets' cAdvisor
// endpoint and kube-state-metrics would hold them: the working set of
// each instance (labelled with its cgroup path) at every sample; its
// start time and memory limit every five minutes; the pod's labels
// (kube_pod_labels, label_app and label_shape) and the container's
// readiness (always ready) every five minutes; the container's restart
// counter, and the last termination's reason once there is one, at every
// sample.
func (h History) WriteOpenMetrics(w io.Writer) error {
	bw := bufio.NewWriter(w)
	family := func(name, kind string, each func(r *Recording, emit func(at time.Time, labels string, value float64))) {
		fmt.Fprintf(bw, "# TYPE %s %s\n", name, kind)
		for i := range h {
			r := &h[i]
			// Each series' samples together, in time order.
			series := map[string][]string{}
			var order []string
			each(r, func(at time.Time, labels string, value float64) {
				if _, ok := series[labels]; !ok {
					order = append(order, labels)
				}
				series[labels] = append(series[labels], fmt.Sprintf("%s{%s} %s %s\n", name, labels,
					strconv.FormatFloat(value, 'f', -1, 64), strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)))
			})
			for _, l := range order {
				for _, line := range series[l] {
					_, _ = bw.WriteString(line) // bufio keeps the first error for Flush
				}
			}
		}
	}
	family("container_memory_working_set_bytes", "gauge", func(r *Recording, emit func(time.Time, string, float64)) {
		for _, s := range r.Samples {
			emit(s.Time, r.cadvisorLabels(s.ContainerID), float64(s.Bytes))
		}
	})
	family("container_start_time_seconds", "gauge", func(r *Recording, emit func(time.Time, string, float64)) {
		r.everyFive(func(s workingset.Sample, in *backtest.Instance) {
			emit(s.Time, r.cadvisorLabels(s.ContainerID), float64(in.Started.Unix()))
		})
	})
	family("container_spec_memory_limit_bytes", "gauge", func(r *Recording, emit func(time.Time, string, float64)) {
		limit := r.Pod.Pod.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory]
		r.everyFive(func(s workingset.Sample, _ *backtest.Instance) {
			emit(s.Time, r.cadvisorLabels(s.ContainerID), float64(limit.Value()))
		})
	})
	family("kube_pod_labels", "gauge", func(r *Recording, emit func(time.Time, string, float64)) {
		labels := fmt.Sprintf(`namespace=%q,pod=%q,uid=%q,label_app=%q,label_shape=%q`, r.Pod.Pod.Namespace, r.Pod.Pod.Name, r.Pod.Pod.UID,
			r.Pod.Pod.Labels["app"], r.Pod.Pod.Labels["shape"])
		r.everyFive(func(s workingset.Sample, _ *backtest.Instance) { emit(s.Time, labels, 1) })
	})
	family("kube_pod_container_status_ready", "gauge", func(r *Recording, emit func(time.Time, string, float64)) {
		r.everyFive(func(s workingset.Sample, _ *backtest.Instance) { emit(s.Time, r.stateLabels(""), 1) })
	})
	family("kube_pod_container_status_restarts_total", "counter", func(r *Recording, emit func(time.Time, string, float64)) {
		for _, s := range r.Samples {
			emit(s.Time, r.stateLabels(""), float64(r.instanceOf(s.ContainerID)))
		}
	})
	family("kube_pod_container_status_last_terminated_reason", "gauge", func(r *Recording, emit func(time.Time, string, float64)) {
		for _, s := range r.Samples {
			if n := r.instanceOf(s.ContainerID); n > 0 {
				emit(s.Time, r.stateLabels(r.Pod.Containers[0].Instances[n-1].Reason), 1)
			}
		}
	})
	_, _ = bw.WriteString("# EOF\n")
	return bw.Flush()
}

// cadvisorLabels are the labels of cAdvisor's series of the container's
// instance id, its cgroup path as cgroupfs names it.
func (r *Recording) cadvisorLabels(id string) string {
	return fmt.Sprintf(`namespace=%q,pod=%q,container="app",id="/kubepods/burstable/pod%s/%s"`, r.Pod.Pod.Namespace, r.Pod.Pod.Name, r.Pod.Pod.UID, id)
}

// stateLabels are the labels of kube-state-metrics' series of the
// container's state; reason, when set, is the last termination's.
func (r *Recording) stateLabels(reason string) string {
	l := fmt.Sprintf(`namespace=%q,pod=%q,uid=%q,container="app"`, r.Pod.Pod.Namespace, r.Pod.Pod.Name, r.Pod.Pod.UID)
	if reason != "" {
		l += fmt.Sprintf(`,reason=%q`, reason)
	}
	return l
}

// instanceOf is the index of the instance of that ID.
func (r *Recording) instanceOf(id string) int {
	return slices.IndexFunc(r.Pod.Containers[0].Instances, func(in backtest.Instance) bool { return in.ID == id })
}

// everyFive calls f with each instance's first sample and a sample every
// five minutes after.
func (r *Recording) everyFive(f func(workingset.Sample, *backtest.Instance)) {
	var last time.Time
	lastID := ""
	for _, s := range r.Samples {
		if s.ContainerID != lastID || s.Time.Sub(last) >= 5*time.Minute {
			f(s, &r.Pod.Containers[0].Instances[r.instanceOf(s.ContainerID)])
			last, lastID = s.Time, s.ContainerID
		}
	}
}
