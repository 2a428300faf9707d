package pods

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// shortIDLength is how much of a container's ID an Instance keeps: enough
// to tell the instances of one container apart, as `crictl ps` does.
const shortIDLength = 12

// Instance names the instance of a container a status reports:
// "RESTARTCOUNT/ID" with the first 12 characters of the container's ID,
// "RESTARTCOUNT/-" while no container has been created. The kubelet makes
// a new instance, with a new ID and a higher restart count, for every
// restart, so two Instances of one container differ exactly when it was
// started again in between. Start times cannot say that: they have a
// resolution of one second.
func Instance(st *corev1.ContainerStatus) string {
	id := st.ContainerID
	if i := strings.Index(id, "://"); i >= 0 {
		id = id[i+3:]
	}
	if len(id) > shortIDLength {
		id = id[:shortIDLength]
	}
	if id == "" {
		id = "-"
	}
	return strconv.Itoa(int(st.RestartCount)) + "/" + id
}
