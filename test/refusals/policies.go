package refusals

import (
	"fmt"
	"strconv"
	"strings"
)

// Policies are the RecreatePolicies refused on create.
var Policies = []Refusal{
	{Input: "no spec", Stage: StageSchema, Spec: ``, Field: "spec", Message: "Required value"},
	{Input: "no selector", Stage: StageSchema, Spec: `schedule: {cron: "@daily"}`, Field: "spec.selector", Message: "Required value"},
	{Input: "no schedule, rules or restartAt", Stage: StageCEL, Spec: `selector: {}`, Field: "spec", Message: "a policy needs a schedule, rules or restartAt"},
	{Input: "a name longer than 63 characters", Stage: StageWebhook, Name: strings.Repeat("p", 64), Spec: `{selector: {}, schedule: {cron: "@daily"}}`,
		Field: "metadata.name", Message: "must be no more than 63 characters: every request the policy creates carries it in the label rejuv.dev/policy"},

	{Input: "a selector operator that does not exist", Stage: StageWebhook, Spec: `{selector: {matchExpressions: [{key: app, operator: Contains, values: [web]}]}, schedule: {cron: "@daily"}}`,
		Field: "spec.selector.matchExpressions[0].operator", Message: `Invalid value: "Contains": not a valid selector operator`},
	{Input: "In without values", Stage: StageWebhook, Spec: `{selector: {matchExpressions: [{key: app, operator: In}]}, schedule: {cron: "@daily"}}`,
		Field: "spec.selector.matchExpressions[0].values", Message: "must be specified when `operator` is 'In' or 'NotIn'"},
	{Input: "Exists with values", Stage: StageWebhook, Spec: `{selector: {matchExpressions: [{key: app, operator: Exists, values: [web]}]}, schedule: {cron: "@daily"}}`,
		Field: "spec.selector.matchExpressions[0].values", Message: "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"},
	{Input: "a label value that is not one", Stage: StageWebhook, Spec: `{selector: {matchLabels: {app: "-web-"}}, schedule: {cron: "@daily"}}`,
		Field: "spec.selector.matchLabels", Message: `Invalid value: "-web-"`},

	{Input: "more than 32 containers", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, containers: [` + numbered("c", 33) + `]}`,
		Field: "spec.containers", Message: "must have at most 32 items"},
	{Input: "a container listed twice", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, containers: [app, app]}`,
		Field: "spec.containers[1]", Message: `Duplicate value: "app"`},
	{Input: "an empty container name", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, containers: [""]}`,
		Field: "spec.containers[0]", Message: `Invalid value: "": must not be empty`},
	{Input: "a container name that is not one", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, containers: [app, "Web_Server"]}`,
		Field: "spec.containers[1]", Message: `Invalid value: "Web_Server": not a container name`},
	{Input: "a pattern with brackets", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, containers: ["app[12]"]}`,
		Field: "spec.containers[0]", Message: "only * and ? may be used as wildcards"},
	{Input: "a pattern that cannot match a container name", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, containers: ["app_*"]}`,
		Field: "spec.containers[0]", Message: "cannot match a container name"},
	{Input: "a container pattern longer than 63 characters", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, containers: [` + strings.Repeat("c", 64) + `]}`,
		Field: "spec.containers[0]", Message: "may not be more than 63 bytes"},

	{Input: "a signal name that is not a Rego identifier", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}], signals: [{name: gc-pause, query: up}]}`,
		Field: "spec.signals[0].name", Message: "should match"},
	{Input: "a signal without a query", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}], signals: [{name: queue}]}`,
		Field: "spec.signals[0].query", Message: "Required value"},
	{Input: "two signals of one name", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}], signals: [{name: queue, query: up}, {name: queue, query: up}]}`,
		Field: "spec.signals[1]", Message: "Duplicate value"},
	{Input: "a signal query longer than 4096 characters", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}], signals: [{name: queue, query: "` + strings.Repeat("q", 4097) + `"}]}`,
		Field: "spec.signals[0].query", Message: "may not be more than 4096 bytes"},
	{Input: "more than 16 signals", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}], signals: [` + signals(17) + `]}`,
		Field: "spec.signals", Message: "must have at most 16 items"},
	{Input: "a signal query that is not PromQL", Stage: StageWebhook, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}], signals: [{name: queue, query: "sum(queue"}]}`,
		Field: "spec.signals[0].query", Message: "not PromQL: 1:10: parse error: unclosed left parenthesis"},
	{Input: "a signal query that reads another namespace's series", Stage: StageWebhook, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}], signals: [{name: queue, query: 'label_replace(sum(queue{namespace="kube-system"}), "namespace", "shop", "", "")'}]}`,
		Field: "spec.signals[0].query", Message: `selector queue{namespace="kube-system"} reads no series of namespace`},
	{Input: "a signal query that does not return an instant vector", Stage: StageWebhook, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}], signals: [{name: queue, query: "queue[5m]"}]}`,
		Field: "spec.signals[0].query", Message: "it returns a range vector, not an instant vector with a series per pod"},

	{Input: "a cron expression that is not one", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "61 * * * *"}}`,
		Field: "spec.schedule.cron", Message: "not a cron expression"},
	{Input: "a cron expression with seconds", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "0 0 3 * * *"}}`,
		Field: "spec.schedule.cron", Message: "five fields: minute hour day-of-month month day-of-week"},
	{Input: "a cron expression that never fires", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "0 0 30 2 *"}}`,
		Field: "spec.schedule.cron", Message: "never fires: no date matches the day-of-month and month fields"},
	{Input: "a time zone in the expression", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "TZ=Europe/Berlin 0 3 * * *"}}`,
		Field: "spec.schedule.cron", Message: "set the time zone in timeZone, not in the expression"},
	{Input: "an empty cron expression", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: ""}}`,
		Field: "spec.schedule.cron", Message: "should be at least 1 chars long"},
	{Input: "a cron expression longer than 256 characters", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "` + strings.Repeat("0", 257) + `"}}`,
		Field: "spec.schedule.cron", Message: "may not be more than 256 bytes"},
	{Input: "an unknown time zone", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "0 3 * * *", timeZone: Europe/Atlantis}}`,
		Field: "spec.schedule.timeZone", Message: "unknown time zone (an IANA name such as Europe/Berlin or UTC)"},
	{Input: "the time zone Local", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "0 3 * * *", timeZone: Local}}`,
		Field: "spec.schedule.timeZone", Message: "Local depends on the manager's machine"},
	{Input: "a time zone longer than 64 characters", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily", timeZone: ` + strings.Repeat("z", 65) + `}}`,
		Field: "spec.schedule.timeZone", Message: "may not be more than 64 bytes"},
	{Input: "a starting deadline below 1 s", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily", startingDeadlineSeconds: 0}}`,
		Field: "spec.schedule.startingDeadlineSeconds", Message: "should be greater than or equal to 1"},
	{Input: "a starting deadline over a week", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily", startingDeadlineSeconds: 604801}}`,
		Field: "spec.schedule.startingDeadlineSeconds", Message: "should be less than or equal to 604800"},
	{Input: "a window that never opens", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, windows: [{cron: "0 0 31 4 *", duration: 1h}]}`,
		Field: "spec.windows[0].cron", Message: "never fires"},
	{Input: "a window that is not a cron expression", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, windows: [{cron: "* 25 * * *"}]}`,
		Field: "spec.windows[0].cron", Message: "not a cron expression"},
	{Input: "a window in an unknown time zone", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, windows: [{cron: "* 0-6 * * *", timeZone: Mars/Olympus}]}`,
		Field: "spec.windows[0].timeZone", Message: "unknown time zone"},
	{Input: "more than 8 windows", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, windows: [` + strings.Repeat(`{cron: "@daily", duration: 1h},`, 9) + `]}`,
		Field: "spec.windows", Message: "must have at most 8 items"},

	{Input: "an evaluation interval that is not a duration", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, evaluationInterval: soon}`,
		Field: "spec.evaluationInterval", Message: "should match"},
	{Input: "an evaluation interval below 1 s", Stage: StageWebhook, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}], evaluationInterval: 500ms}`,
		Field: "spec.evaluationInterval", Message: "must be at least 1s"},
	{Input: "a cooldown that is not a duration", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {cooldown: "5 minutes"}}`,
		Field: "spec.limits.cooldown", Message: "should match"},
	{Input: "a negative cooldown", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {cooldown: "-5m"}}`,
		Field: "spec.limits.cooldown", Message: "should match"},
	{Input: "a memory recurrence that is not a duration", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {memoryRecurrence: "two hours"}}`,
		Field: "spec.limits.memoryRecurrence", Message: "should match"},
	{Input: "maxPerHour below 1", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {maxPerHour: 0}}`,
		Field: "spec.limits.maxPerHour", Message: "should be greater than or equal to 1"},
	{Input: "maxMatchingPercent above 100", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {maxMatchingPercent: 101}}`,
		Field: "spec.limits.maxMatchingPercent", Message: "should be less than or equal to 100"},
	{Input: "minMatchingToHalt below 1", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, limits: {minMatchingToHalt: 0}}`,
		Field: "spec.limits.minMatchingToHalt", Message: "should be greater than or equal to 1"},

	{Input: "maxUnavailable written badly", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, rollout: {maxUnavailable: "25 %"}}`,
		Field: "spec.rollout.maxUnavailable", Message: "a percentage is a whole number followed by %"},
	{Input: "maxUnavailable above 100%", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, rollout: {maxUnavailable: "150%"}}`,
		Field: "spec.rollout.maxUnavailable", Message: "must be between 1% and 100%"},
	{Input: "maxUnavailable of 0", Stage: StageWebhook, Spec: `{selector: {}, schedule: {cron: "@daily"}, rollout: {maxUnavailable: 0}}`,
		Field: "spec.rollout.maxUnavailable", Message: "at least 1"},
	{Input: "an unknown onFailure", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, rollout: {onFailure: Retry}}`,
		Field: "spec.rollout.onFailure", Message: `Unsupported value: "Retry"`},

	{Input: "a request deadline below 3 s", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {activeDeadlineSeconds: 2}}`,
		Field: "spec.recreate.activeDeadlineSeconds", Message: "should be greater than or equal to 3"},
	{Input: "a request deadline over a week", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {activeDeadlineSeconds: 9300000000}}`,
		Field: "spec.recreate.activeDeadlineSeconds", Message: "should be less than or equal to 604800"},
	{Input: "an unknown failurePolicy", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {strategy: {failurePolicy: Retry}}}`,
		Field: "spec.recreate.strategy.failurePolicy", Message: `Unsupported value: "Retry"`},
	{Input: "a negative grace period", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {strategy: {terminationGracePeriodSeconds: -1}}}`,
		Field: "spec.recreate.strategy.terminationGracePeriodSeconds", Message: "should be greater than or equal to 0"},
	{Input: "a grace period over a day", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {strategy: {terminationGracePeriodSeconds: 86401}}}`,
		Field: "spec.recreate.strategy.terminationGracePeriodSeconds", Message: "should be less than or equal to 86400"},
	{Input: "a negative unready grace", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {strategy: {unreadyGracePeriodSeconds: -5}}}`,
		Field: "spec.recreate.strategy.unreadyGracePeriodSeconds", Message: "should be greater than or equal to 0"},
	{Input: "an unready grace over a day", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {strategy: {unreadyGracePeriodSeconds: 86401}}}`,
		Field: "spec.recreate.strategy.unreadyGracePeriodSeconds", Message: "should be less than or equal to 86400"},
	{Input: "a negative minStartedSeconds", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {strategy: {minStartedSeconds: -1}}}`,
		Field: "spec.recreate.strategy.minStartedSeconds", Message: "should be greater than or equal to 0"},
	{Input: "a negative TTL", Stage: StageSchema, Spec: `{selector: {}, schedule: {cron: "@daily"}, recreate: {ttlSecondsAfterFinished: -1}}`,
		Field: "spec.recreate.ttlSecondsAfterFinished", Message: "should be greater than or equal to 0"},

	{Input: "more than 16 rules", Stage: StageSchema, Spec: `{selector: {}, rules: [` + numberedRules(17) + `]}`,
		Field: "spec.rules", Message: "must have at most 16 items"},
	{Input: "two rules of one name", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: a, builtin: max-age}, {name: a, builtin: restart-storm}]}`,
		Field: "spec.rules[1]", Message: "Duplicate value"},
	{Input: "a rule name that is not a DNS label", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: Big_Rule, builtin: max-age}]}`,
		Field: "spec.rules[0].name", Message: "should match"},
	{Input: "a rule name longer than 40 characters", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: ` + strings.Repeat("r", 41) + `, builtin: max-age}]}`,
		Field: "spec.rules[0].name", Message: "may not be more than 40 bytes"},
	{Input: "both builtin and rego", Stage: StageCEL, Spec: `{selector: {}, rules: [{name: x, builtin: max-age, rego: "package x"}]}`,
		Field: "spec.rules[0]", Message: "exactly one of builtin and rego must be set"},
	{Input: "an empty builtin", Stage: StageWebhook, Spec: `{selector: {}, rules: [{name: x, builtin: ""}]}`,
		Field: "spec.rules[0].builtin", Message: "set builtin or rego"},
	{Input: "an unknown builtin", Stage: StageWebhook, Spec: `{selector: {}, rules: [{name: x, builtin: memory-leek}]}`,
		Field: "spec.rules[0].builtin", Message: `Unsupported value: "memory-leek": supported values: "max-age", "memory-leak"`},
	{Input: "a builtin name longer than 63 characters", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: x, builtin: ` + strings.Repeat("b", 64) + `}]}`,
		Field: "spec.rules[0].builtin", Message: "may not be more than 63 bytes"},
	{Input: "an unknown parameter", Stage: StageWebhook, Spec: `{selector: {}, rules: [{name: x, builtin: stuck-readiness, parameters: {notReadyFour: 10m}}]}`,
		Field: "spec.rules[0].parameters[notReadyFour]", Message: "unknown parameter (known: "},
	{Input: "more than 32 parameters", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: x, builtin: max-age, parameters: {` + numberedParameters(33) + `}}]}`,
		Field: "spec.rules[0].parameters", Message: "must have at most 32 items"},
	{Input: "a parameter of the wrong type", Stage: StageWebhook, Spec: `{selector: {}, rules: [{name: x, builtin: stuck-readiness, parameters: {notReadyFor: [10]}}]}`,
		Field: "spec.rules[0].parameters[notReadyFor]", Message: "duration"},
	{Input: "a duration given as a number", Stage: StageWebhook, Spec: `{selector: {}, rules: [{name: x, builtin: stuck-readiness, parameters: {notReadyFor: 600}}]}`,
		Field: "spec.rules[0].parameters[notReadyFor]", Message: "is not a duration: give it with a unit"},
	{Input: "parameters on an inline rule", Stage: StageWebhook, Spec: "{selector: {}, rules: [{name: x, parameters: {a: 1}, rego: \"package x\\nrecreate contains \\\"app\\\" if false\"}]}",
		Field: "spec.rules[0].parameters", Message: "parameters apply only to a builtin rule"},

	{Input: "Rego that does not parse", Stage: StageCompile, Spec: "{selector: {}, rules: [{name: custom, rego: \"package x\\nrecreate contains c if {\\n  c := \\n}\"}]}",
		Field: "spec.rules[0].rego", Message: `rule "custom" does not compile: line 4: rego_parse_error`},
	{Input: "Rego longer than 64 KiB", Stage: StageSchema, Spec: `{selector: {}, rules: [{name: big, rego: "package x\\n` + strings.Repeat("#", 65536) + `"}]}`,
		Field: "spec.rules[0].rego", Message: "may not be more than 65536 bytes"},
	{Input: "Rego without recreate", Stage: StageCompile, Spec: "{selector: {}, rules: [{name: quiet, rego: \"package x\\nallow := true\"}]}",
		Field: "spec.rules[0].rego", Message: `the module does not define the rule "recreate"`},
	{Input: "a recreate that is never a set", Stage: StageCompile, Spec: "{selector: {}, rules: [{name: one, rego: \"package x\\nrecreate := \\\"app\\\"\"}]}",
		Field: "spec.rules[0].rego", Message: `line 2: rego_type_error: recreate is string, never a set: write recreate contains {"container": NAME, "reason": TEXT} if ...`},
	{Input: "a call out of the sandbox (a built-in its audit denies: http.send, opa.runtime, rand.intn, glob.match, graph.reachable, ...; docs/security.md)", Stage: StageCompile,
		Spec:  "{selector: {}, rules: [{name: phone-home, rego: \"package x\\nrecreate contains \\\"app\\\" if http.send({\\\"method\\\": \\\"GET\\\", \\\"url\\\": \\\"http://x\\\"}).status_code == 200\"}]}",
		Field: "spec.rules[0].rego", Message: "line 2: rego_type_error: undefined function http.send"},
	{Input: "a comparison of values that nest references past the type checker's bound (`aN := [aN-1, aN-1]` twelve times over, `a12 in [b12]`)", Stage: StageCompile,
		Spec:  "{selector: {}, rules: [{name: deep, rego: " + strconv.Quote(deepValues(12)) + "}]}",
		Field: "spec.rules[0].rego", Message: "rego_compile_error: this value has 12288 parts once its references are expanded"},
	{Input: "a METADATA schema (it could name a file or a URL)", Stage: StageCompile,
		Spec:  "{selector: {}, rules: [{name: peek, rego: \"package x\\n# METADATA\\n# schemas:\\n#   - input: {\\\"$ref\\\": \\\"file:///etc/hostname\\\"}\\nrecreate contains \\\"app\\\" if input.pod\"}]}",
		Field: "spec.rules[0].rego", Message: "METADATA schemas are not allowed in rules: a schema may refer to files and URLs"},
	{Input: "a rule that reads a field of the pod the manager does not keep (volumes, environment, probes, managedFields, ...)", Stage: StageCompile,
		Spec:  "{selector: {}, rules: [{name: volumes, rego: \"package x\\nrecreate contains \\\"app\\\" if input.pod.spec.volumes[_].emptyDir\"}]}",
		Field: "spec.rules[0].rego", Message: "line 2: rego_compile_error: input.pod.spec.volumes is not kept"},
	{Input: "an unsafe variable", Stage: StageCompile, Spec: "{selector: {}, rules: [{name: unsafe, rego: \"package x\\nrecreate contains c if { c == 1 }\"}]}",
		Field: "spec.rules[0].rego", Message: "line 2: rego_unsafe_var_error: var c is unsafe"},
}

// numbered is n names, prefix0 onwards, as a YAML flow list's items.
func numbered(prefix string, n int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return strings.Join(names, ", ")
}

// numberedParameters is n parameters p0: 1 onwards, as a YAML flow
// mapping's items.
func numberedParameters(n int) string {
	params := make([]string, n)
	for i := range params {
		params[i] = fmt.Sprintf("p%d: 1", i)
	}
	return strings.Join(params, ", ")
}

// numberedRules is n builtin rules r0 onwards, as a YAML flow list's items.
func numberedRules(n int) string {
	rules := make([]string, n)
	for i := range rules {
		rules[i] = fmt.Sprintf("{name: r%d, builtin: max-age}", i)
	}
	return strings.Join(rules, ", ")
}

// signals is a YAML list of n signals named s0, s1...
func signals(n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf("{name: s%d, query: up}", i)
	}
	return strings.Join(items, ", ")
}

// deepValues is a module whose rules a0..aN and b0..bN each hold two
// references to the one before, and whose recreate compares aN with bN.
func deepValues(n int) string {
	var b strings.Builder
	b.WriteString("package x\na0 := [1]\nb0 := [2]\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "a%d := [a%d, a%d]\nb%d := [b%d, b%d]\n", i, i-1, i-1, i, i-1, i-1)
	}
	fmt.Fprintf(&b, "recreate contains \"app\" if a%d in [b%d]\n", n, n)
	return b.String()
}
