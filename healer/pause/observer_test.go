package pause

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// TestTheLeaderMarksThePauseItActsOnAndSaysSoInAMetric: paused, the
// ConfigMap gets the digest of the data acted on and rejuv_paused is 1;
// once the data changes, the digest follows; resumed, the metric is 0.
func TestTheLeaderMarksThePauseItActsOnAndSaysSoInAMetric(t *testing.T) {
	cm := pauseMap(map[string]string{v1alpha1.PauseReasonKey: "INC-3"})
	cm.ResourceVersion = ""
	c := fake.NewClientBuilder().WithObjects(cm).Build()
	o := &Observer{Client: c, Switch: &Switch{Reader: c, Namespace: cm.Namespace}}
	key := client.ObjectKeyFromObject(cm)
	observe := func() *corev1.ConfigMap {
		t.Helper()
		if _, err := o.Reconcile(context.Background(), ctrl.Request{NamespacedName: key}); err != nil {
			t.Fatal(err)
		}
		got := &corev1.ConfigMap{}
		if err := c.Get(context.Background(), key, got); err != nil && !isNotFound(err) {
			t.Fatal(err)
		}
		return got
	}

	got := observe()
	if a := got.Annotations[v1alpha1.PauseObservedAnnotation]; a != v1alpha1.PauseDigest(got.Data) {
		t.Errorf("observed %q, want the digest of the data, %q", a, v1alpha1.PauseDigest(got.Data))
	}
	if v := testutil.ToFloat64(pausedGauge); v != 1 {
		t.Errorf("rejuv_paused %v while paused, want 1", v)
	}
	got.Data[v1alpha1.PauseRequestsKey] = v1alpha1.PauseEnd
	if err := c.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	again := observe()
	if a := again.Annotations[v1alpha1.PauseObservedAnnotation]; a != v1alpha1.PauseDigest(again.Data) || a == v1alpha1.PauseDigest(cm.Data) {
		t.Errorf("observed %q after the data changed, want the new data's digest %q", a, v1alpha1.PauseDigest(again.Data))
	}
	if err := c.Delete(context.Background(), again); err != nil {
		t.Fatal(err)
	}
	observe()
	if v := testutil.ToFloat64(pausedGauge); v != 0 {
		t.Errorf("rejuv_paused %v once resumed, want 0", v)
	}
}

func TestTheDigestTellsDataApart(t *testing.T) {
	a := v1alpha1.PauseDigest(map[string]string{"reason": "x", "requests": "end"})
	for _, other := range []map[string]string{nil, {"reason": "x"}, {"reason": "x", "requests": "finish"}, {"reason": "xrequests", "": "end"}} {
		if v1alpha1.PauseDigest(other) == a {
			t.Errorf("data %v has the digest of another", other)
		}
	}
	if a != v1alpha1.PauseDigest(map[string]string{"requests": "end", "reason": "x"}) {
		t.Error("the digest depends on the order of the keys")
	}
}

func isNotFound(err error) bool { return client.IgnoreNotFound(err) == nil }
