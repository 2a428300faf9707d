package planner

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	appsv1beta1 "github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// BenchmarkGatherRequests sums up the 1,000 requests of a rolling restart
// in one namespace, as every pass of the policy does twice: its
// allocations per pass are what a takeover amid such a restart pays for
// each of its passes.
func BenchmarkGatherRequests(b *testing.B) {
	now := time.Now()
	p := &v1alpha1.RecreatePolicy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "rolling", UID: "policy-uid"}}
	run := now.Add(-time.Minute).UTC().Format(time.RFC3339)
	crrs := make([]appsv1beta1.ContainerRecreateRequest, 1000)
	pods := make(map[string]*corev1.Pod, len(crrs))
	for i := range crrs {
		name, uid := fmt.Sprintf("web-%d", i), types.UID(fmt.Sprintf("pod-uid-%d", i))
		pods[name] = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: uid}}
		crrs[i] = appsv1beta1.ContainerRecreateRequest{
			ObjectMeta: metav1.ObjectMeta{
				Namespace: "ns", Name: fmt.Sprintf("rolling-%d", i), CreationTimestamp: metav1.Time{Time: now.Add(-30 * time.Second)},
				Labels:          map[string]string{appsv1beta1.PodUIDLabel: string(uid), appsv1beta1.TriggerLabel: string(TriggerSchedule)},
				Annotations:     map[string]string{appsv1beta1.RunAnnotation: run},
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(p, v1alpha1.GroupVersion.WithKind("RecreatePolicy"))},
			},
			Spec: appsv1beta1.ContainerRecreateRequestSpec{PodName: name, Containers: []appsv1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if f := GatherRequests(p, crrs, pods, now); f.Own != len(crrs) {
			b.Fatalf("%d of the policy's %d requests counted in flight", f.Own, len(crrs))
		}
	}
}
