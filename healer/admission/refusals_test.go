package admission

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
)

// refusal is one input the API server refuses with Rejuv installed, as
// docs/validation.md lists it: TestEveryRefusal creates it on the real API
// server and TestValidationDoc writes the document from these rows.
type refusal struct {
	// input says in words what the user wrote.
	input string
	// stage is what refuses it: the CRD's schema, a CEL rule of the CRD,
	// a webhook, or the Rego compiler inside the policy webhook.
	stage string
	// name is the object's name when it matters; spec is its spec as YAML.
	name, spec string
	// field and message are the cause the API server returns: the field
	// it names and what its message says (the test checks that the
	// message contains it).
	field, message string
}

// The stages, in the order the API server runs them for a policy.
const (
	stageSchema  = "schema"
	stageCEL     = "CEL"
	stageWebhook = "webhook"
	stageCompile = "Rego compiler"
)

// policyRefusals are the RecreatePolicies refused on create.
var policyRefusals = []refusal{
	{input: "no spec", stage: stageSchema, spec: ``, field: "spec", message: "Required value"},
	{input: "no selector", stage: stageSchema, spec: `schedule: {cron: "@daily"}`, field: "spec.selector", message: "Required value"},
	{input: "neither a schedule nor rules", stage: stageCEL, spec: `selector: {}`, field: "spec", message: "a policy needs a schedule, rules or both"},
	{input: "a name longer than 63 characters", stage: stageWebhook, name: strings.Repeat("p", 64), spec: `{selector: {}, schedule: {cron: "@daily"}}`,
		field: "metadata.name", message: "must be no more than 63 characters: every request the policy creates carries it in the label rejuv.dev/policy"},

	{input: "a selector operator that does not exist", stage: stageWebhook, spec: `{selector: {matchExpressions: [{key: app, operator: Contains, values: [web]}]}, schedule: {cron: "@daily"}}`,
		field: "spec.selector.matchExpressions[0].operator", message: `Invalid value: "Contains": not a valid selector operator`},
	{input: "In without values", stage: stageWebhook, spec: `{selector: {matchExpressions: [{key: app, operator: In}]}, schedule: {cron: "@daily"}}`,
		field: "spec.selector.matchExpressions[0].values", message: "must be specified when `operator` is 'In' or 'NotIn'"},
	{input: "Exists with values", stage: stageWebhook, spec: `{selector: {matchExpressions: [{key: app, operator: Exists, values: [web]}]}, schedule: {cron: "@daily"}}`,
		field: "spec.selector.matchExpressions[0].values", message: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"},
	{input: "a label value that is not one", stage: stageWebhook, spec: `{selector: {matchLabels: {app: "-web-"}}, schedule: {cron: "@daily"}}`,
		field: "spec.selector.matchLabels", message: `Invalid value: "-web-"`},

	{input: "more than 32 containers", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, containers: [` + numbered("c", 33) + `]}`,
		field: "spec.containers", message: "must have at most 32 items"},
	{input: "a container listed twice", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, containers: [app, app]}`,
		field: "spec.containers[1]", message: `Duplicate value: "app"`},
	{input: "an empty container name", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "@daily"}, containers: [""]}`,
		field: "spec.containers[0]", message: `Invalid value: "": must not be empty`},
	{input: "a container name that is not one", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "@daily"}, containers: [app, "Web_Server"]}`,
		field: "spec.containers[1]", message: `Invalid value: "Web_Server": not a container name`},
	{input: "a pattern with brackets", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "@daily"}, containers: ["app[12]"]}`,
		field: "spec.containers[0]", message: "only * and ? may be used as wildcards"},
	{input: "a pattern that cannot match a container name", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "@daily"}, containers: ["app_*"]}`,
		field: "spec.containers[0]", message: "cannot match a container name"},

	{input: "a cron expression that is not one", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "61 * * * *"}}`,
		field: "spec.schedule.cron", message: "not a cron expression"},
	{input: "a cron expression with seconds", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "0 0 3 * * *"}}`,
		field: "spec.schedule.cron", message: "five fields: minute hour day-of-month month day-of-week"},
	{input: "a cron expression that never fires", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "0 0 30 2 *"}}`,
		field: "spec.schedule.cron", message: "never fires: no date matches the day-of-month and month fields"},
	{input: "a time zone in the expression", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "TZ=Europe/Berlin 0 3 * * *"}}`,
		field: "spec.schedule.cron", message: "set the time zone in timeZone, not in the expression"},
	{input: "an empty cron expression", stage: stageSchema, spec: `{selector: {}, schedule: {cron: ""}}`,
		field: "spec.schedule.cron", message: "should be at least 1 chars long"},
	{input: "an unknown time zone", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "0 3 * * *", timeZone: Europe/Atlantis}}`,
		field: "spec.schedule.timeZone", message: "unknown time zone (an IANA name such as Europe/Berlin or UTC)"},
	{input: "the time zone Local", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "0 3 * * *", timeZone: Local}}`,
		field: "spec.schedule.timeZone", message: "Local depends on the manager's machine"},
	{input: "a starting deadline below 1 s", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily", startingDeadlineSeconds: 0}}`,
		field: "spec.schedule.startingDeadlineSeconds", message: "should be greater than or equal to 1"},
	{input: "a window that never opens", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "@daily"}, windows: [{cron: "0 0 31 4 *", duration: 1h}]}`,
		field: "spec.windows[0].cron", message: "never fires"},
	{input: "more than 8 windows", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, windows: [` + strings.Repeat(`{cron: "@daily", duration: 1h},`, 9) + `]}`,
		field: "spec.windows", message: "must have at most 8 items"},

	{input: "an evaluation interval that is not a duration", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, evaluationInterval: soon}`,
		field: "spec.evaluationInterval", message: "should match"},
	{input: "a cooldown that is not a duration", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {cooldown: "5 minutes"}}`,
		field: "spec.limits.cooldown", message: "should match"},
	{input: "maxPerHour below 1", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {maxPerHour: 0}}`,
		field: "spec.limits.maxPerHour", message: "should be greater than or equal to 1"},
	{input: "maxMatchingPercent above 100", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {maxMatchingPercent: 101}}`,
		field: "spec.limits.maxMatchingPercent", message: "should be less than or equal to 100"},
	{input: "minMatchingToHalt below 1", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {minMatchingToHalt: 0}}`,
		field: "spec.limits.minMatchingToHalt", message: "should be greater than or equal to 1"},

	{input: "maxUnavailable written badly", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "@daily"}, rollout: {maxUnavailable: "25 %"}}`,
		field: "spec.rollout.maxUnavailable", message: "a percentage is a whole number followed by %"},
	{input: "maxUnavailable above 100%", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "@daily"}, rollout: {maxUnavailable: "150%"}}`,
		field: "spec.rollout.maxUnavailable", message: "must be between 1% and 100%"},
	{input: "maxUnavailable of 0", stage: stageWebhook, spec: `{selector: {}, schedule: {cron: "@daily"}, rollout: {maxUnavailable: 0}}`,
		field: "spec.rollout.maxUnavailable", message: "at least 1"},
	{input: "an unknown onFailure", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, rollout: {onFailure: Retry}}`,
		field: "spec.rollout.onFailure", message: `Unsupported value: "Retry"`},

	{input: "a request deadline below 3 s", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {activeDeadlineSeconds: 2}}`,
		field: "spec.recreate.activeDeadlineSeconds", message: "should be greater than or equal to 3"},
	{input: "an unknown failurePolicy", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {strategy: {failurePolicy: Retry}}}`,
		field: "spec.recreate.strategy.failurePolicy", message: `Unsupported value: "Retry"`},
	{input: "a negative grace period", stage: stageSchema, spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {strategy: {terminationGracePeriodSeconds: -1}}}`,
		field: "spec.recreate.strategy.terminationGracePeriodSeconds", message: "should be greater than or equal to 0"},

	{input: "more than 16 rules", stage: stageSchema, spec: `{selector: {}, rules: [` + numberedRules(17) + `]}`,
		field: "spec.rules", message: "must have at most 16 items"},
	{input: "two rules of one name", stage: stageSchema, spec: `{selector: {}, rules: [{name: a, builtin: max-age}, {name: a, builtin: restart-storm}]}`,
		field: "spec.rules[1]", message: "Duplicate value"},
	{input: "a rule name that is not a DNS label", stage: stageSchema, spec: `{selector: {}, rules: [{name: Big_Rule, builtin: max-age}]}`,
		field: "spec.rules[0].name", message: "should match"},
	{input: "a rule name longer than 40 characters", stage: stageSchema, spec: `{selector: {}, rules: [{name: ` + strings.Repeat("r", 41) + `, builtin: max-age}]}`,
		field: "spec.rules[0].name", message: "may not be more than 40 bytes"},
	{input: "both builtin and rego", stage: stageCEL, spec: `{selector: {}, rules: [{name: x, builtin: max-age, rego: "package x"}]}`,
		field: "spec.rules[0]", message: "exactly one of builtin and rego must be set"},
	{input: "an empty builtin", stage: stageWebhook, spec: `{selector: {}, rules: [{name: x, builtin: ""}]}`,
		field: "spec.rules[0].builtin", message: "set builtin or rego"},
	{input: "an unknown builtin", stage: stageWebhook, spec: `{selector: {}, rules: [{name: x, builtin: memory-leek}]}`,
		field: "spec.rules[0].builtin", message: `Unsupported value: "memory-leek": supported values: "max-age", "memory-leak"`},
	{input: "an unknown parameter", stage: stageWebhook, spec: `{selector: {}, rules: [{name: x, builtin: stuck-readiness, parameters: {notReadyFour: 10m}}]}`,
		field: "spec.rules[0].parameters[notReadyFour]", message: "unknown parameter (known: "},
	{input: "a parameter of the wrong type", stage: stageWebhook, spec: `{selector: {}, rules: [{name: x, builtin: stuck-readiness, parameters: {notReadyFor: [10]}}]}`,
		field: "spec.rules[0].parameters[notReadyFor]", message: "duration"},
	{input: "a duration given as a number", stage: stageWebhook, spec: `{selector: {}, rules: [{name: x, builtin: stuck-readiness, parameters: {notReadyFor: 600}}]}`,
		field: "spec.rules[0].parameters[notReadyFor]", message: "is not a duration: give it with a unit"},
	{input: "parameters on an inline rule", stage: stageWebhook, spec: "{selector: {}, rules: [{name: x, parameters: {a: 1}, rego: \"package x\\nrecreate contains \\\"app\\\" if false\"}]}",
		field: "spec.rules[0].parameters", message: "parameters apply only to a builtin rule"},

	{input: "Rego that does not parse", stage: stageCompile, spec: "{selector: {}, rules: [{name: custom, rego: \"package x\\nrecreate contains c if {\\n  c := \\n}\"}]}",
		field: "spec.rules[0].rego", message: `rule "custom" does not compile: line 4: rego_parse_error`},
	{input: "Rego without recreate", stage: stageCompile, spec: "{selector: {}, rules: [{name: quiet, rego: \"package x\\nallow := true\"}]}",
		field: "spec.rules[0].rego", message: `the module does not define the rule "recreate"`},
	{input: "a recreate that is never a set", stage: stageCompile, spec: "{selector: {}, rules: [{name: one, rego: \"package x\\nrecreate := \\\"app\\\"\"}]}",
		field: "spec.rules[0].rego", message: `line 2: rego_type_error: recreate is string, never a set: write recreate contains {"container": NAME, "reason": TEXT} if ...`},
	{input: "a call out of the sandbox (http.send, net.*, opa.runtime, rand.intn, uuid.rfc4122, json.match_schema, json.verify_schema)", stage: stageCompile,
		spec:  "{selector: {}, rules: [{name: phone-home, rego: \"package x\\nrecreate contains \\\"app\\\" if http.send({\\\"method\\\": \\\"GET\\\", \\\"url\\\": \\\"http://x\\\"}).status_code == 200\"}]}",
		field: "spec.rules[0].rego", message: "line 2: rego_type_error: undefined function http.send"},
	{input: "a METADATA schema (it could name a file or a URL)", stage: stageCompile,
		spec:  "{selector: {}, rules: [{name: peek, rego: \"package x\\n# METADATA\\n# schemas:\\n#   - input: {\\\"$ref\\\": \\\"file:///etc/hostname\\\"}\\nrecreate contains \\\"app\\\" if input.pod\"}]}",
		field: "spec.rules[0].rego", message: "METADATA schemas are not allowed in rules: a schema may refer to files and URLs"},
	{input: "an unsafe variable", stage: stageCompile, spec: "{selector: {}, rules: [{name: unsafe, rego: \"package x\\nrecreate contains c if { c == 1 }\"}]}",
		field: "spec.rules[0].rego", message: "line 2: rego_unsafe_var_error: var c is unsafe"},
}

// requestRefusals are the ContainerRecreateRequests refused on create, for
// the pods of refusalPods.
var requestRefusals = []refusal{
	{input: "no podName", stage: stageWebhook, spec: `containers: [{name: app}]`, field: "spec.podName", message: "Required value: name the pod whose containers to recreate"},
	{input: "no containers", stage: stageWebhook, spec: `podName: web`, field: "spec.containers", message: "Required value: list at least one container to recreate"},
	{input: "a container without a name", stage: stageWebhook, spec: `{podName: web, containers: [{name: ""}]}`, field: "spec.containers[0].name", message: "Required value: name the container"},
	{input: "a container twice", stage: stageWebhook, spec: `{podName: web, containers: [{name: app}, {name: app}]}`, field: "spec.containers[1].name", message: `Duplicate value: "app"`},
	{input: "a pod that does not exist", stage: stageWebhook, spec: `{podName: ghost, containers: [{name: app}]}`, field: "spec.podName", message: `Invalid value: "ghost": no such pod in namespace`},
	{input: "a pod not scheduled yet", stage: stageWebhook, spec: `{podName: unscheduled, containers: [{name: app}]}`, field: "spec.podName", message: "the pod is not scheduled to a node yet"},
	{input: "a pod that has finished", stage: stageWebhook, spec: `{podName: done, containers: [{name: app}]}`, field: "spec.podName", message: "the pod has finished (phase Succeeded); its containers will not run again"},
	{input: "a pod being deleted", stage: stageWebhook, spec: `{podName: leaving, containers: [{name: app}]}`, field: "spec.podName", message: "the pod is being deleted"},
	{input: "a container the pod does not have", stage: stageWebhook, spec: `{podName: web, containers: [{name: nope}]}`, field: "spec.containers[0].name", message: `Invalid value: "nope": pod web has no container of that name`},
	{input: "an ordinary init container", stage: stageWebhook, spec: `{podName: web, containers: [{name: setup}]}`, field: "spec.containers[0].name", message: "is an init container, which runs to completion"},
	{input: "a container of a pod with restartPolicy Never or OnFailure", stage: stageWebhook, spec: `{podName: job, containers: [{name: app}]}`, field: "spec.containers[0].name",
		message: "pod job has restartPolicy OnFailure: the kubelet would not start the container again once stopped"},
	{input: "a container that has not started", stage: stageWebhook, spec: `{podName: web, containers: [{name: late}]}`, field: "spec.containers[0].name", message: "has not been started yet (the pod's status has no containerID for it); retry once it runs"},
	{input: "a statusContext", stage: stageWebhook, spec: `{podName: web, containers: [{name: app, statusContext: {containerID: "containerd://forged", restartCount: 0}}]}`,
		field: "spec.containers[0].statusContext", message: "is recorded from the pod's status when the request is created; it cannot be set"},
	{input: "a preStop", stage: stageWebhook, spec: `{podName: web, containers: [{name: app, preStop: {exec: {command: ["true"]}}}]}`,
		field: "spec.containers[0].preStop", message: "is copied from the pod's container spec; it cannot be set"},
	{input: "ports", stage: stageWebhook, spec: `{podName: web, containers: [{name: app, ports: [{containerPort: 1}]}]}`,
		field: "spec.containers[0].ports", message: "are copied from the pod's container spec; they cannot be set"},
	{input: "an unknown failurePolicy", stage: stageWebhook, spec: `{podName: web, containers: [{name: app}], strategy: {failurePolicy: Sometimes}}`,
		field: "spec.strategy.failurePolicy", message: `Unsupported value: "Sometimes": supported values: "Fail", "Ignore"`},
	{input: "a negative grace period", stage: stageWebhook, spec: `{podName: web, containers: [{name: app}], strategy: {terminationGracePeriodSeconds: -1}}`,
		field: "spec.strategy.terminationGracePeriodSeconds", message: "Invalid value: -1: must not be negative"},
	{input: "a negative unready grace", stage: stageWebhook, spec: `{podName: web, containers: [{name: app}], strategy: {unreadyGracePeriodSeconds: -5}}`,
		field: "spec.strategy.unreadyGracePeriodSeconds", message: "Invalid value: -5: must not be negative"},
	{input: "a negative minStartedSeconds", stage: stageWebhook, spec: `{podName: web, containers: [{name: app}], strategy: {minStartedSeconds: -1}}`,
		field: "spec.strategy.minStartedSeconds", message: "must not be negative"},
	{input: "a deadline below 3 s", stage: stageWebhook, spec: `{podName: web, containers: [{name: app}], activeDeadlineSeconds: 2}`,
		field: "spec.activeDeadlineSeconds", message: "Invalid value: 2: must be at least 3 seconds"},
	{input: "a negative TTL", stage: stageWebhook, spec: `{podName: web, containers: [{name: app}], ttlSecondsAfterFinished: -1}`,
		field: "spec.ttlSecondsAfterFinished", message: "must not be negative"},
}

func numbered(prefix string, n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return strings.Join(names, ", ")
}

func numberedRules(n int) string {
	rules := make([]string, n)
	for i := range rules {
		rules[i] = fmt.Sprintf("{name: r%d, builtin: max-age}", i)
	}
	return strings.Join(rules, ", ")
}

// refusalPods are the pods the request rows name: web (see podSpec), and
// pods unscheduled, finished, of a job, and being deleted.
func refusalPods(t *testing.T, ns string) {
	t.Helper()
	createPod(t, ns, "web", nil)
	createPod(t, ns, "unscheduled", func(p *corev1.Pod) { p.Spec.NodeName = "" })
	createPod(t, ns, "done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded })
	createPod(t, ns, "job", func(p *corev1.Pod) { p.Spec.RestartPolicy = corev1.RestartPolicyOnFailure })
	leaving := createPod(t, ns, "leaving", func(p *corev1.Pod) { p.Finalizers = []string{"test.rejuv.dev/hold"} })
	if err := admin.Delete(context.Background(), leaving); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = admin.Patch(context.Background(), leaving, client.RawPatch("application/merge-patch+json", []byte(`{"metadata":{"finalizers":null}}`)))
	})
}

// TestEveryRefusal creates every row of docs/validation.md on the real API
// server, with Rejuv's CRDs and webhooks, and checks the cause it returns.
func TestEveryRefusal(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	refusalPods(t, ns)
	run := func(kind string, rows []refusal, create func(i int, r refusal) error) {
		for i, r := range rows {
			t.Run(kind+"/"+r.input, func(t *testing.T) {
				err := create(i, r)
				var se *apierrors.StatusError
				if !errors.As(err, &se) || !apierrors.IsInvalid(err) {
					t.Fatalf("got %v, want Invalid", err)
				}
				if !hasCause(err, r.field, r.message) {
					t.Errorf("got %v\nwant a cause on %s containing %q", err, r.field, r.message)
				}
			})
		}
	}
	run("RecreatePolicy", policyRefusals, func(i int, r refusal) error {
		name := r.name
		if name == "" {
			name = fmt.Sprintf("p-%d", i)
		}
		return createPolicy(context.Background(), admin, ns, name, r.spec)
	})
	run("ContainerRecreateRequest", requestRefusals, func(i int, r refusal) error {
		return createRequest(context.Background(), ns, fmt.Sprintf("r-%d", i), r.spec)
	})
}

// createRequest creates a ContainerRecreateRequest from YAML (its spec),
// as kubectl apply would send it.
func createRequest(ctx context.Context, ns, name, spec string) error {
	return createFromYAML(ctx, admin, v1beta1.GroupVersion.WithKind("ContainerRecreateRequest"), ns, name, spec)
}
