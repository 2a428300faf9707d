package engine

import (
	"time"

	corev1 "k8s.io/api/core/v1"
)

func containerStatus(s corev1.ContainerStatus) map[string]any {
	entry := map[string]any{"ready": s.Ready, "started": nil, "state": "unknown", "startedAt": nil, "restartCount": s.RestartCount, "lastTermination": nil}
	if s.Started != nil {
		entry["started"] = *s.Started
	}
	switch {
	case s.State.Running != nil:
		entry["state"] = "running"
		entry["startedAt"] = s.State.Running.StartedAt.UTC().Format(time.RFC3339Nano)
	case s.State.Terminated != nil:
		entry["state"] = "terminated"
	case s.State.Waiting != nil:
		entry["state"] = "waiting"
	}
	if t := s.LastTerminationState.Terminated; t != nil {
		entry["lastTermination"] = map[string]any{"reason": t.Reason, "exitCode": t.ExitCode, "finishedAt": t.FinishedAt.UTC().Format(time.RFC3339Nano)}
	}
	return entry
}

func resources(r corev1.ResourceRequirements) map[string]any {
	list := func(l corev1.ResourceList) map[string]any {
		out := map[string]any{}
		if q, ok := l[corev1.ResourceMemory]; ok {
			out["memory"] = q.Value()
		}
		if q, ok := l[corev1.ResourceCPU]; ok {
			out["cpu"] = q.MilliValue()
		}
		return out
	}
	return map[string]any{"requests": list(r.Requests), "limits": list(r.Limits)}
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}
