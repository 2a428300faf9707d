package policy

import (
	"context"
	"strings"
	"testing"
)

func TestRulesReadingPodFieldsTheManagerDropsAreRefused(t *testing.T) {
	cases := map[string]struct {
		expr string
		// refused is the field named in the error, empty when the rule
		// compiles.
		refused string
	}{
		"label":                 {`input.pod.metadata.labels.app == "web"`, ""},
		"annotation by key":     {`input.pod.metadata.annotations["rejuv.dev/tier"] == "web"`, ""},
		"owner":                 {`input.pod.metadata.ownerReferences[0].kind == "ReplicaSet"`, ""},
		"node":                  {`input.pod.spec.nodeName == "node-1"`, ""},
		"limit":                 {`input.pod.spec.containers[_].resources.limits.memory == "1Gi"`, ""},
		"last termination":      {`input.pod.status.containerStatuses[i].lastState.terminated.reason == "OOMKilled"`, ""},
		"condition":             {`input.pod.status.conditions[_].type == "Ready"`, ""},
		"a field by a variable": {`some k; input.pod.spec[k] == 1`, ""},
		"the whole pod":         {`p := input.pod; p.spec.volumes[_].emptyDir`, ""},
		"volumes":               {`input.pod.spec.volumes[_].emptyDir`, "input.pod.spec.volumes"},
		"environment":           {`input.pod.spec.containers[0].env[_].name == "X"`, "input.pod.spec.containers[_].env"},
		"probe":                 {`input.pod.spec.containers[_].readinessProbe.periodSeconds > 10`, "input.pod.spec.containers[_].readinessProbe"},
		"managed fields":        {`count(input.pod.metadata.managedFields) > 1`, "input.pod.metadata.managedFields"},
		"status volume mounts":  {`input.pod.status.containerStatuses[_].volumeMounts`, "input.pod.status.containerStatuses[_].volumeMounts"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			module := "package x\n\nrecreate contains c.name if {\n\tsome c in input.containers\n\t" + tc.expr + "\n}\n"
			err := Check(context.Background(), []Rule{{Name: "r", Module: module}})
			if tc.refused == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("compiled; want %s refused", tc.refused)
			}
			want := tc.refused + " is not kept"
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "line 5") {
				t.Errorf("error %q, want it to say %q at line 5", err, want)
			}
		})
	}
}
