package policyspec

import (
	"fmt"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/rejuv-dev/rejuv/api/pods"
)

// Containers are the container name patterns of a policy; empty matches
// every regular container and sidecar.
type Containers []string

// Match reports whether the container name matches.
func (c Containers) Match(name string) bool {
	if len(c) == 0 {
		return true
	}
	for _, p := range c {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

// Candidates returns the names of the pod's containers and sidecars the
// patterns match that the kubelet would start again once stopped (see
// pods.Restartable: by the container's own restartPolicy and rules, or
// the pod's), sidecars first as the pod starts them.
func (c Containers) Candidates(pod *corev1.Pod) []string {
	candidates, _ := c.Split(pod)
	return candidates
}

// Matching returns the names of the pod's containers and sidecars the
// patterns match, in the order of Candidates, whether or not the kubelet
// would start them again once stopped.
func (c Containers) Matching(pod *corev1.Pod) []string {
	var names []string
	for i := range pod.Spec.InitContainers {
		ic := &pod.Spec.InitContainers[i]
		if pods.IsSidecar(ic) && c.Match(ic.Name) {
			names = append(names, ic.Name)
		}
	}
	for i := range pod.Spec.Containers {
		if name := pod.Spec.Containers[i].Name; c.Match(name) {
			names = append(names, name)
		}
	}
	return names
}

// Unrestartable returns the names of the pod's containers and sidecars
// the patterns match that the kubelet would not start again once stopped:
// the ones Matching has and Candidates lacks.
func (c Containers) Unrestartable(pod *corev1.Pod) []string {
	_, unrestartable := c.Split(pod)
	return unrestartable
}

// Split divides the names Matching returns, in its order, into the
// Candidates and the Unrestartable, in one walk.
func (c Containers) Split(pod *corev1.Pod) (candidates, unrestartable []string) {
	for _, name := range c.Matching(pod) {
		if pods.Restartable(pod, name) {
			candidates = append(candidates, name)
		} else {
			unrestartable = append(unrestartable, name)
		}
	}
	return candidates, unrestartable
}

// Unmatched returns the patterns that match no container or sidecar of any
// of pods.
func (c Containers) Unmatched(pods []corev1.Pod) []string {
	var out []string
	for _, p := range c {
		one := Containers{p}
		found := false
		for i := range pods {
			if len(one.Candidates(&pods[i])) > 0 {
				found = true
				break
			}
		}
		if !found {
			out = append(out, p)
		}
	}
	return out
}

func parseContainers(patterns []string, fld *field.Path) (Containers, field.ErrorList) {
	var errs field.ErrorList
	for i, p := range patterns {
		if msg := checkPattern(p); msg != "" {
			errs = append(errs, field.Invalid(fld.Index(i), p, msg))
		}
	}
	return Containers(patterns), errs
}

// checkPattern accepts a container name (a DNS-1123 label) in which * and ?
// may stand for characters.
func checkPattern(p string) string {
	if p == "" {
		return "must not be empty"
	}
	if strings.ContainsAny(p, `[]\`) {
		return "only * and ? may be used as wildcards"
	}
	if _, err := path.Match(p, ""); err != nil {
		return fmt.Sprintf("not a valid pattern: %v", err)
	}
	if !strings.ContainsAny(p, "*?") {
		if msgs := validation.IsDNS1123Label(p); len(msgs) > 0 {
			return "not a container name: " + strings.Join(msgs, "; ")
		}
		return ""
	}
	// With the wildcards replaced by a letter, what is left must be able to
	// name a container.
	if msgs := validation.IsDNS1123Label(strings.NewReplacer("*", "a", "?", "a").Replace(p)); len(msgs) > 0 {
		return "cannot match a container name: " + strings.Join(msgs, "; ")
	}
	return ""
}
