package crr

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/rejuv-dev/rejuv/api/apps"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

func TestInFlightCounterCountsWhatTheCacheHolds(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	request := func(ns, name string, age time.Duration, deadline int64, phase v1beta1.ContainerRecreateRequestPhase, labels map[string]string) client.Object {
		crr := &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(now.Add(-age)),
		}}
		if deadline > 0 {
			crr.Spec.ActiveDeadlineSeconds = &deadline
		}
		crr.Status.Phase = phase
		return crr
	}
	byPolicy := map[string]string{v1beta1.PolicyLabel: "leaks"}
	scheme, err := apps.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	reader := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		request("shop", "a", time.Minute, 0, v1beta1.PhaseRecreating, byPolicy),
		request("shop", "b", 10*time.Minute, 300, v1beta1.PhasePending, byPolicy), // past its deadline
		request("shop", "c", time.Minute, 0, "", nil),
		request("shop", "d", time.Hour, 60, v1beta1.PhaseCompleted, nil),      // ended: not counted
		request("ops", "e", 2*time.Minute, 120, v1beta1.PhaseRecreating, nil), // exactly at its deadline
	).Build()
	c := &InFlightCounter{Reader: reader, Clock: clocktesting.NewFakePassiveClock(now)}
	if err := c.Count(context.Background()); err != nil {
		t.Fatal(err)
	}
	for labels, want := range map[[2]string]float64{{"shop", v1beta1.SourcePolicy}: 2, {"shop", v1beta1.SourceManual}: 1, {"ops", v1beta1.SourceManual}: 1} {
		if got := testutil.ToFloat64(crrInFlight.WithLabelValues(labels[0], labels[1])); got != want {
			t.Errorf("rejuv_crr_in_flight%v is %v, want %v", labels, got, want)
		}
	}
	for ns, want := range map[string]float64{"shop": 1, "ops": 1} {
		if got := testutil.ToFloat64(crrPastDeadline.WithLabelValues(ns)); got != want {
			t.Errorf("rejuv_crr_past_deadline{namespace=%q} is %v, want %v", ns, got, want)
		}
	}

	// Once they end, the series go: a gauge of nothing in flight is no
	// series, not a stale count.
	var list v1beta1.ContainerRecreateRequestList
	if err := reader.List(context.Background(), &list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if list.Items[i].Namespace == "ops" || list.Items[i].Name == "b" {
			list.Items[i].Status.Phase = v1beta1.PhaseCompleted
			if err := reader.Update(context.Background(), &list.Items[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := c.Count(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(crrPastDeadline); n != 0 {
		t.Errorf("%d past-deadline series once none is, want 0", n)
	}
	if n := testutil.CollectAndCount(crrInFlight); n != 2 {
		t.Errorf("%d in-flight series, want 2 (shop's policy and manual requests)", n)
	}
	if got := testutil.ToFloat64(crrInFlight.WithLabelValues("shop", v1beta1.SourcePolicy)); got != 1 {
		t.Errorf("rejuv_crr_in_flight{shop, policy} is %v, want 1", got)
	}
}
