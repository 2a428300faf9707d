package refusals

import (
	"fmt"
	"strings"
)

// Requests are the ContainerRecreateRequests refused on create. They name
// the pods healer/admission's refusalPods creates: web (containers app,
// with a preStop and ports, and late, not started yet; init containers
// setup and a native sidecar), unscheduled, done (Succeeded), job
// (restartPolicy OnFailure), solo (container app with its own
// restartPolicy Never), leaving (being deleted), patient (with a
// terminationGracePeriodSeconds of 100000) and verbose (whose container
// app's preStop is over the 4,096 bytes a request copies).
var Requests = []Refusal{
	{Input: "no podName", Stage: StageWebhook, Spec: `containers: [{name: app}]`, Field: "spec.podName", Message: "Required value: name the pod whose containers to recreate"},
	{Input: "no containers", Stage: StageWebhook, Spec: `podName: web`, Field: "spec.containers", Message: "Required value: list at least one container to recreate"},
	{Input: "a container without a name", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: ""}]}`, Field: "spec.containers[0].name", Message: "Required value: name the container"},
	{Input: "a container twice", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}, {name: app}]}`, Field: "spec.containers[1].name", Message: `Duplicate value: "app"`},
	{Input: "a pod that does not exist", Stage: StageWebhook, Spec: `{podName: ghost, containers: [{name: app}]}`, Field: "spec.podName", Message: `Invalid value: "ghost": no such pod in namespace`},
	{Input: "a pod not scheduled yet", Stage: StageWebhook, Spec: `{podName: unscheduled, containers: [{name: app}]}`, Field: "spec.podName", Message: "the pod is not scheduled to a node yet"},
	{Input: "a pod that has finished", Stage: StageWebhook, Spec: `{podName: done, containers: [{name: app}]}`, Field: "spec.podName", Message: "the pod has finished (phase Succeeded); its containers will not run again"},
	{Input: "a pod being deleted", Stage: StageWebhook, Spec: `{podName: leaving, containers: [{name: app}]}`, Field: "spec.podName", Message: "the pod is being deleted"},
	{Input: "a container the pod does not have", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: nope}]}`, Field: "spec.containers[0].name", Message: `Invalid value: "nope": pod web has no container of that name`},
	{Input: "an ordinary init container", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: setup}]}`, Field: "spec.containers[0].name", Message: "is an init container, which runs to completion"},
	{Input: "a container of a pod with restartPolicy Never or OnFailure", Stage: StageWebhook, Spec: `{podName: job, containers: [{name: app}]}`, Field: "spec.containers[0].name",
		Message: "pod job: spec.restartPolicy is OnFailure: the kubelet would not start container app again if a stop ends it with exit code 0"},
	{Input: "a container whose own restartPolicy or restartPolicyRules keep the kubelet from starting it again", Stage: StageWebhook, Spec: `{podName: solo, containers: [{name: app}]}`, Field: "spec.containers[0].name",
		Message: "pod solo: spec.containers[0].restartPolicy is Never: the kubelet would not start container app again once stopped"},
	{Input: "a container that has not started", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: late}]}`, Field: "spec.containers[0].name", Message: "has not been started yet (the pod's status has no containerID for it); retry once it runs"},
	{Input: "a statusContext", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app, statusContext: {containerID: "containerd://forged", restartCount: 0}}]}`,
		Field: "spec.containers[0].statusContext", Message: "is recorded from the pod's status when the request is created; it cannot be set"},
	{Input: "a preStop", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app, preStop: {exec: {command: ["true"]}}}]}`,
		Field: "spec.containers[0].preStop", Message: "is copied from the pod's container spec; it cannot be set"},
	{Input: "a container whose `lifecycle.preStop` is over 4,096 bytes (protobuf)", Stage: StageWebhook, Spec: `{podName: verbose, containers: [{name: app}]}`,
		Field: "spec.containers[0].preStop", Message: "more than the 4096 a request copies"},
	{Input: "more than 16 containers", Stage: StageWebhook, Spec: `{podName: web, containers: [` + containers(17) + `]}`,
		Field: "spec.containers", Message: "Too many: 17: must have at most 16 items"},
	{Input: "ports", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app, ports: [{containerPort: 1}]}]}`,
		Field: "spec.containers[0].ports", Message: "are copied from the pod's container spec; they cannot be set"},
	{Input: "an unknown failurePolicy", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}], strategy: {failurePolicy: Sometimes}}`,
		Field: "spec.strategy.failurePolicy", Message: `Unsupported value: "Sometimes": supported values: "Fail", "Ignore"`},
	{Input: "a negative grace period", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}], strategy: {terminationGracePeriodSeconds: -1}}`,
		Field: "spec.strategy.terminationGracePeriodSeconds", Message: "Invalid value: -1: must not be negative"},
	{Input: "a negative unready grace", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}], strategy: {unreadyGracePeriodSeconds: -5}}`,
		Field: "spec.strategy.unreadyGracePeriodSeconds", Message: "Invalid value: -5: must not be negative"},
	{Input: "a negative minStartedSeconds", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}], strategy: {minStartedSeconds: -1}}`,
		Field: "spec.strategy.minStartedSeconds", Message: "must not be negative"},
	{Input: "a grace period over a day", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}], strategy: {terminationGracePeriodSeconds: 86401}}`,
		Field: "spec.strategy.terminationGracePeriodSeconds", Message: "Invalid value: 86401: must be at most 86400 seconds (a day)"},
	{Input: "no grace period, on a pod whose own is over a day", Stage: StageWebhook, Spec: `{podName: patient, containers: [{name: app}]}`,
		Field: "spec.strategy.terminationGracePeriodSeconds", Message: "pod patient's terminationGracePeriodSeconds (100000), which a request takes when it sets none, is more than the maximum of 86400 seconds (a day); set spec.strategy.terminationGracePeriodSeconds to at most 86400"},
	{Input: "an unready grace over a day", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}], strategy: {unreadyGracePeriodSeconds: 9300000000}}`,
		Field: "spec.strategy.unreadyGracePeriodSeconds", Message: "Invalid value: 9300000000: must be at most 86400 seconds (a day)"},
	{Input: "a deadline below 3 s", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}], activeDeadlineSeconds: 2}`,
		Field: "spec.activeDeadlineSeconds", Message: "Invalid value: 2: must be at least 3 seconds"},
	{Input: "a deadline over a week", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}], activeDeadlineSeconds: 9300000000}`,
		Field: "spec.activeDeadlineSeconds", Message: "Invalid value: 9300000000: must be at most 604800 seconds (a week)"},
	{Input: "a negative TTL", Stage: StageWebhook, Spec: `{podName: web, containers: [{name: app}], ttlSecondsAfterFinished: -1}`,
		Field: "spec.ttlSecondsAfterFinished", Message: "must not be negative"},
}

// containers lists n containers named c0, c1, ... in a request's YAML.
func containers(n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("{name: c%d}", i)
	}
	return strings.Join(names, ", ")
}
