package executor

import "strings"

// runtimeID strips the runtime prefix: "containerd://abc" is "abc".
func runtimeID(containerID string) string {
	if _, id, ok := strings.Cut(containerID, "://"); ok {
		return id
	}
	return containerID
}
