package recreatepolicy

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	apipods "github.com/rejuv-dev/rejuv/api/pods"
)

// baselineOf records what a run sees of its pods as it begins: each pod's
// UID to its containers' instances (status.run.baseline).
func baselineOf(pods []*corev1.Pod) map[string]string {
	out := make(map[string]string, len(pods))
	for _, pod := range pods {
		out[string(pod.UID)] = instancesOf(pod)
	}
	return out
}

// baselineBytes is the size of a baseline as MaxBaselineBytes counts it:
// its keys' and values' bytes.
func baselineBytes(baseline map[string]string) int {
	n := 0
	for uid, instances := range baseline {
		n += len(uid) + len(instances)
	}
	return n
}

// instancesOf writes the instance of each of the pod's containers,
// regular and init, as "NAME=INSTANCE" sorted by name and separated by
// commas.
func instancesOf(pod *corev1.Pod) string {
	var parts []string
	for _, list := range [][]corev1.ContainerStatus{pod.Status.ContainerStatuses, pod.Status.InitContainerStatuses} {
		for i := range list {
			parts = append(parts, list[i].Name+"="+apipods.Instance(&list[i]))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// startedAgain reports whether every named container of the pod runs as
// another instance than the one recorded: such a pod has nothing left to
// do in the run. A container the record lacks, or that does not run now,
// has not been started again.
func startedAgain(pod *corev1.Pod, names []string, recorded string) bool {
	before := map[string]string{}
	for part := range strings.SplitSeq(recorded, ",") {
		if name, instance, ok := strings.Cut(part, "="); ok {
			before[name] = instance
		}
	}
	for _, name := range names {
		st := apipods.ContainerStatus(pod, name)
		was, ok := before[name]
		if st == nil || st.State.Running == nil || !ok || apipods.Instance(st) == was {
			return false
		}
	}
	return true
}
