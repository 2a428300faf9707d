package plugin

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestContainersTheKubeletWouldNotRestart: restart POD and create crr
// refuse a container named that the kubelet would not start again once
// stopped, by the pod's restartPolicy or the container's own, naming the
// pod's field; named none, they take the others and say which they leave
// alone; restart TYPE/NAME -c refuses such a container of any pod.
func TestContainersTheKubeletWouldNotRestart(t *testing.T) {
	pod := func(change func(*corev1.Pod)) *corev1.Pod {
		p := fixturePod()
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "worker", Image: "web"})
		if change != nil {
			change(p)
		}
		return p
	}
	ownNever := func(p *corev1.Pod) { p.Spec.Containers[0].RestartPolicy = new(corev1.ContainerRestartPolicyNever) }
	podNever := func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyNever }
	for _, tc := range []struct {
		name  string
		pod   *corev1.Pod
		named []string
		want  []string
		// err and warning are parts of the error and of the warning, "" for none.
		err, warning string
	}{
		{name: "all of an Always pod", pod: pod(nil), want: []string{"proxy", "app", "worker"}},
		{name: "app named, its own Never", pod: pod(ownNever), named: []string{"app"},
			err: "pod shop/web-0: spec.containers[0].restartPolicy is Never: the kubelet would not start container app again once stopped"},
		{name: "worker named beside app's own Never", pod: pod(ownNever), named: []string{"worker"}, want: []string{"worker"}},
		{name: "none named, app's own Never", pod: pod(ownNever), want: []string{"proxy", "worker"},
			warning: "pod shop/web-0: left alone: spec.containers[0].restartPolicy is Never: the kubelet would not start container app again once stopped"},
		{name: "app named in a Never pod", pod: pod(podNever), named: []string{"app"},
			err: "pod shop/web-0: spec.restartPolicy is Never: the kubelet would not start container app again once stopped"},
		{name: "none named in a Never pod without a sidecar", pod: pod(func(p *corev1.Pod) { podNever(p); p.Spec.InitContainers = nil }),
			err: "pod shop/web-0 has no container the kubelet would start again once stopped, so none can be recreated in place: spec.restartPolicy is Never: the kubelet would not start container app again once stopped; spec.restartPolicy is Never"},
		{name: "a name the pod lacks", pod: pod(nil), named: []string{"db"}, err: `no container "db"; the pod's containers are proxy, app, worker`},
	} {
		got, err := podContainers(tc.pod, tc.named)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: error %v; want one saying %q", tc.name, err, tc.err)
		case !slices.Equal(got, tc.want):
			t.Errorf("%s: containers %v, want %v", tc.name, got, tc.want)
		}
		if err != nil {
			continue
		}
		var w bytes.Buffer
		warnLeftAlone(&w, tc.pod, tc.named)
		if tc.warning == "" && w.Len() > 0 || !strings.Contains(w.String(), tc.warning) {
			t.Errorf("%s: warned %q, want %q", tc.name, w.String(), tc.warning)
		}
	}

	selected := []corev1.Pod{*pod(nil), *pod(ownNever)}
	selected[1].ObjectMeta = metav1.ObjectMeta{Namespace: "shop", Name: "web-1"}
	for _, tc := range []struct {
		patterns []string
		err      string
	}{
		{nil, ""},
		{[]string{"worker", "proxy"}, ""},
		{[]string{"a*"}, "pod shop/web-1: spec.containers[0].restartPolicy is Never"},
		{[]string{"app"}, "pod shop/web-1: spec.containers[0].restartPolicy is Never: the kubelet would not start container app again once stopped"},
	} {
		err := namedRestartable(tc.patterns, selected)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("-c %v: error %v; want %q", tc.patterns, err, tc.err)
		}
	}
}
