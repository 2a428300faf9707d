package pods

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Bounds on what Trim keeps of the values a pod's author chooses freely.
// The manager keeps every pod of the cluster: without them anyone who may
// create pods decides how much memory it needs (a pod's annotations may
// hold 256 KiB, and its lifecycle commands most of its 1.5 MB).
const (
	// MaxKeptAnnotationBytes bounds one annotation kept of a pod, its key
	// and value together.
	MaxKeptAnnotationBytes = 4 << 10
	// MaxKeptAnnotationsBytes bounds the annotations kept of a pod in
	// all, counted in the order of their keys.
	MaxKeptAnnotationsBytes = 16 << 10
	// MaxLifecycleBytes bounds a container's lifecycle kept of a pod (its
	// protobuf size), and the preStop a request copies from it.
	MaxLifecycleBytes = 4 << 10
)

// TrimmedAnnotation is the annotation by which a trimmed pod says what
// Trim left out past the bounds above: the annotations and the containers
// whose lifecycle it dropped. A pod without it was kept whole, as far as
// Trim keeps pods.
const TrimmedAnnotation = "rejuv.dev/trimmed"

// maxTrimmedNote bounds TrimmedAnnotation's value: past it the names are
// counted, not listed.
const maxTrimmedNote = 1 << 10

// Trimmed reports whether Trim left out some of the pod's annotations or
// lifecycles.
func Trimmed(pod *corev1.Pod) bool {
	_, ok := pod.Annotations[TrimmedAnnotation]
	return ok
}

// boundAnnotations returns the annotations within the bounds, and the
// keys of those left out. TrimmedAnnotation, set by an earlier Trim, is
// kept apart from the bounds, so that trimming a trimmed pod keeps it.
// The map is m itself when nothing was left out.
func boundAnnotations(m map[string]string) (map[string]string, []string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	total := 0
	var dropped []string
	for _, k := range keys {
		size := len(k) + len(m[k])
		switch {
		case k == TrimmedAnnotation && len(m[k]) <= maxTrimmedNote:
		case size > MaxKeptAnnotationBytes || total+size > MaxKeptAnnotationsBytes:
			dropped = append(dropped, k)
		default:
			total += size
		}
	}
	if len(dropped) == 0 {
		return m, nil
	}
	kept := make(map[string]string, len(m)-len(dropped))
	for k, v := range m {
		if !slices.Contains(dropped, k) {
			kept[k] = v
		}
	}
	return kept, dropped
}

// boundLifecycle returns the container's lifecycle if it is within
// MaxLifecycleBytes, nil and true otherwise.
func boundLifecycle(c *corev1.Container) (*corev1.Lifecycle, bool) {
	if c.Lifecycle != nil && c.Lifecycle.Size() > MaxLifecycleBytes {
		return nil, true
	}
	return c.Lifecycle, false
}

// trimmedNote is TrimmedAnnotation's value for what was left out, empty
// for nothing; within maxTrimmedNote, counting the names it has no room
// to list.
func trimmedNote(annotations, lifecycles []string) string {
	var b strings.Builder
	part := func(what string, names []string) {
		if len(names) == 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(what)
		for i, n := range names {
			if b.Len()+len(n)+2 > maxTrimmedNote-160 {
				fmt.Fprintf(&b, " and %d more", len(names)-i)
				return
			}
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(" " + n)
		}
	}
	part(fmt.Sprintf("annotations over %d bytes, or past %d in all, left out:", MaxKeptAnnotationBytes, MaxKeptAnnotationsBytes), annotations)
	part(fmt.Sprintf("lifecycle over %d bytes left out of containers:", MaxLifecycleBytes), lifecycles)
	return b.String()
}
