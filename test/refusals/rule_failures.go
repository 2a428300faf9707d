package refusals

import "github.com/rejuv-dev/rejuv/policy/policytest"

// rule is a rule that recreates every candidate container once cond
// holds.
func rule(cond string) string {
	return "package failing\nimport rego.v1\nrecreate contains c.name if {\n\tsome c in input.containers\n\t" + cond + "\n}\n"
}

// RuleFailures are the rules that compile and fail when they run, for pods
// whose only container is app.
var RuleFailures = []RuleFailure{
	{Doing: "runs past the rule deadline (`--rule-deadline`, 250 ms) for a pod", Rego: policytest.Endless,
		Report: RuleFailed, Message: "evaluation stopped at the deadline"},
	{Doing: "allocates more than `--rule-memory-limit` (32 MiB) for a pod, garbage included, such as a list that keeps growing", Rego: policytest.Greedy,
		Report: RuleFailed, Message: "evaluation stopped at the memory bound: it allocated more than 32 MiB for one pod"},
	{Doing: "asks `numbers.range` for more than 100,000 numbers (`numbers.range_step` likewise)", Rego: rule("count(numbers.range(0, 100000)) > 0"),
		Report: Stopped, Message: "numbers.range: 100001 numbers is over the sandbox's bound of 100000"},
	{Doing: "asks `bits.lsh` for a shift of more than 4096 bits", Rego: rule("bits.lsh(1, 4097) > 0"),
		Report: Stopped, Message: "bits.lsh: a shift of 4097 bits is over the sandbox's bound of 4096"},
	{Doing: "does arithmetic on a number of more than 1,000 characters (or with an exponent of more than 3 digits)",
		Rego:   rule(`n := json.unmarshal(concat("", ["7" | some i in numbers.range(1, 1001)]))` + "\n\tn * 2 > 0"),
		Report: Stopped, Message: "mul: a number of 1001 characters is over the sandbox's bound of 1000"},
	{Doing: "gives a `regex.*` built-in a pattern of more than 4 KiB", Rego: rule(`regex.match(concat("", ["a" | some i in numbers.range(1, 4097)]), "a")`),
		Report: Stopped, Message: "regex.match: a pattern of 4097 bytes is over the sandbox's bound of 4096"},
	{Doing: "takes a `sprintf` width from its arguments (`%*d`)", Rego: rule(`sprintf("%*d", [3, 1]) != ""`),
		Report: Stopped, Message: "sprintf: a width or precision taken from the arguments (*) is over the sandbox's bound: write it in the format"},
	{Doing: "builds or reads more than 1 MiB in one call (`concat`, `sprintf`, `json.marshal`, `yaml.marshal`, `sort`, `==`, `print`, ...)",
		Rego:   rule(`big := sprintf("%0600000d", [1])` + "\n\tcount(concat(\",\", [big, big])) > 0"),
		Report: Stopped, Message: "over the sandbox's bound of 1048576 bytes"},
	{Doing: "yields a `recreate` that is not a set (its type depends on the input, so the compiler could not tell)", Rego: "package failing\nrecreate := input.pod.metadata.name\n",
		Report: RuleFailed, Message: "recreate must be a set, got string"},
	{Doing: "yields an item that is not a container name or `{\"container\": NAME, \"reason\": TEXT, \"force\": BOOL}`, such as `{\"name\": NAME}`",
		Rego:   "package failing\nimport rego.v1\nrecreate contains {\"name\": c.name} if {\n\tsome c in input.containers\n}\n",
		Report: RuleFailed, Message: `recreate yielded {"name": "app"}: an object needs a non-empty string "container"`},
	{Doing: "names a container that is not a candidate of the pod", Rego: "package failing\nimport rego.v1\nrecreate contains \"db\" if true\n",
		Report: RuleFailed, Message: `recreate names container "db", which is not a candidate (candidates: app)`},
	{Doing: "takes longer over the policy's pods in one pass than `--policy-evaluation-budget` (10 s)", Rego: policytest.Endless, Pods: 8,
		Report: OverBudget, Message: "per pass (the manager's --policy-evaluation-budget): the rules are not evaluated again until the policy's spec changes"},
}
