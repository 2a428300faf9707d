package plugin

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// now is the fixtures' present.
var now = time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)

func ago(d time.Duration) metav1.Time { return metav1.NewTime(now.Add(-d)) }

// fixtureRequests are a request by hand recreating one container, one of a
// policy's run that succeeded, and one that failed.
func fixtureRequests() []v1beta1.ContainerRecreateRequest {
	return []v1beta1.ContainerRecreateRequest{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0-x7k2p", CreationTimestamp: ago(4 * time.Second),
				Labels:      map[string]string{v1beta1.SourceLabel: "kubectl", v1beta1.NodeNameLabel: "node-a", v1beta1.ActiveLabel: "true"},
				Annotations: map[string]string{v1beta1.ReasonAnnotation: "stuck after failover"}},
			Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web-0", ActiveDeadlineSeconds: new(int64(300)),
				Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}, {Name: "proxy"}}},
			Status: v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhaseRecreating, ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{
				{Name: "app", Phase: v1beta1.PhaseRecreating, Message: "stopped; waiting for the kubelet"},
				{Name: "proxy", Phase: v1beta1.PhasePending},
			}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "nightly-3a233c256d24", CreationTimestamp: ago(10 * time.Minute),
				Labels:      map[string]string{v1beta1.PolicyLabel: "nightly", v1beta1.TriggerLabel: "schedule", v1beta1.NodeNameLabel: "node-a"},
				Annotations: map[string]string{v1beta1.ReasonAnnotation: "scheduled run of 2026-11-24T02:50:00Z"}},
			Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web-1", ActiveDeadlineSeconds: new(int64(600)),
				Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
			Status: v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhaseCompleted, Result: v1beta1.ResultSucceeded, CompletionTime: new(ago(9*time.Minute + 56*time.Second)),
				ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseSucceeded}}},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "stuck-cf17a3ab473c", CreationTimestamp: ago(2 * time.Hour),
				Labels:      map[string]string{v1beta1.PolicyLabel: "stuck", v1beta1.TriggerLabel: "rule.stuck-readiness", v1beta1.NodeNameLabel: "node-b"},
				Annotations: map[string]string{v1beta1.ReasonAnnotation: "stuck-readiness: app: not ready for 12m"}},
			Spec: v1beta1.ContainerRecreateRequestSpec{PodName: "web-2", ActiveDeadlineSeconds: new(int64(60)),
				Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: "app"}}},
			Status: v1beta1.ContainerRecreateRequestStatus{Phase: v1beta1.PhaseCompleted, Result: v1beta1.ResultFailed, CompletionTime: new(ago(119 * time.Minute)),
				Message:                 "deadline of 60s passed",
				ContainerRecreateStates: []v1beta1.ContainerRecreateRequestContainerRecreateState{{Name: "app", Phase: v1beta1.PhaseFailed, Message: "not ready 60s after its restart"}}},
		},
	}
}

// fixturePolicies are a scheduled policy in the middle of a run and a rule
// policy that is halted.
func fixturePolicies() []v1alpha1.RecreatePolicy {
	return []v1alpha1.RecreatePolicy{
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "nightly"},
			Spec: v1alpha1.RecreatePolicySpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Schedule: &v1alpha1.Schedule{Cron: "50 2 * * *"}, Rollout: v1alpha1.Rollout{MaxUnavailable: new(intstr.FromInt32(1))}},
			Status: v1alpha1.RecreatePolicyStatus{
				Conditions:   []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonActive}},
				SelectedPods: 3, ActiveRecreations: 0, NextScheduleTime: new(metav1.NewTime(now.Add(23*time.Hour + 50*time.Minute))),
				Run: &v1alpha1.Run{ScheduledTime: ago(10 * time.Minute), State: v1alpha1.RunRunning, Pods: 3, Recreated: 1},
				RecentDecisions: []v1alpha1.Decision{
					{Time: ago(9 * time.Minute), Pod: "web-2", Containers: []string{"app"}, Trigger: "schedule", Outcome: v1alpha1.OutcomeDisruptionBudget, Reason: "scheduled run of 2026-11-24T02:50:00Z", Message: "PodDisruptionBudget web allows no disruption now (2 healthy, 2 desired)"},
					{Time: ago(10 * time.Minute), Pod: "web-1", Containers: []string{"app"}, Trigger: "schedule", Outcome: v1alpha1.OutcomeCreated, Reason: "scheduled run of 2026-11-24T02:50:00Z", Request: "nightly-3a233c256d24"},
				},
			},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "stuck"},
			Spec: v1alpha1.RecreatePolicySpec{Selector: metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
				Rules: []v1alpha1.Rule{{Name: "stuck-readiness", Builtin: "stuck-readiness"}, {Name: "leak", Builtin: "memory-leak"}}},
			Status: v1alpha1.RecreatePolicyStatus{
				Conditions: []metav1.Condition{
					{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonActive},
					{Type: v1alpha1.ConditionHalted, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonBlastRadius, Message: "rules match 2 of 3 selected pods, over limits.maxMatchingPercent 50%"},
				},
				SelectedPods: 3,
				NoData:       []v1alpha1.RuleNoData{{Rule: "leak", Signal: "memory", Pods: 3, Reason: "metrics.k8s.io answered 503"}},
				RecentDecisions: []v1alpha1.Decision{
					{Time: ago(time.Minute), Pod: "web-0", Containers: []string{"app"}, Trigger: "rule/stuck-readiness", Outcome: v1alpha1.OutcomeHalted, Reason: "stuck-readiness: app: not ready for 14m", Message: "rules match 2 of 3 selected pods, over limits.maxMatchingPercent 50%"},
				},
			},
		},
	}
}

// fixturePod is web-0: running, not ready, with a sidecar.
func fixturePod() *corev1.Pod {
	always := corev1.ContainerRestartPolicyAlways
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-0", UID: "uid-web-0", Labels: map[string]string{"app": "web", "tier": "front"}},
		Spec: corev1.PodSpec{NodeName: "node-a",
			InitContainers: []corev1.Container{{Name: "proxy", Image: "proxy", RestartPolicy: &always}},
			Containers:     []corev1.Container{{Name: "app", Image: "web"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionFalse}}},
	}
}
