package workingset

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsfake "k8s.io/metrics/pkg/client/clientset/versioned/fake"
)

func TestMetricsAPIReadsTheWorkingSet(t *testing.T) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	// The generated fake files pod metrics under a resource its own List
	// does not read (podmetricses, not pods): answer the list directly.
	list := &metricsv1beta1.PodMetricsList{Items: []metricsv1beta1.PodMetrics{{
		ObjectMeta: metav1.ObjectMeta{Name: "web-0", Namespace: "shop"},
		Timestamp:  metav1.NewTime(at), Window: metav1.Duration{Duration: 15 * time.Second},
		Containers: []metricsv1beta1.ContainerMetrics{
			{Name: "app", Usage: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("100Mi"), corev1.ResourceCPU: resource.MustParse("10m")}},
			{Name: "cpu-only", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}},
		},
	}}}
	client := metricsfake.NewSimpleClientset()
	var asked string
	client.PrependReactor("list", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		asked = a.GetNamespace()
		return true, list, nil
	})
	src := MetricsAPI{Client: client.MetricsV1beta1()}
	got, err := src.Sample(context.Background(), "shop")
	if err != nil {
		t.Fatal(err)
	}
	want := []Sample{{Pod: "web-0", Container: "app", Time: at, Bytes: 100 << 20}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("samples %+v, want %+v (no sample for a container without memory)", got, want)
	}
	if asked != "shop" {
		t.Errorf("listed the pod metrics of namespace %q, want shop", asked)
	}
}

func TestMetricsAPISaysWhatFailed(t *testing.T) {
	client := metricsfake.NewSimpleClientset()
	client.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the server could not find the requested resource")
	})
	_, err := MetricsAPI{Client: client.MetricsV1beta1()}.Sample(context.Background(), "shop")
	if err == nil || !strings.Contains(err.Error(), "list the pod metrics of namespace shop: the server could not find") {
		t.Errorf("error %v, want it to name the namespace and the API's answer", err)
	}
}
