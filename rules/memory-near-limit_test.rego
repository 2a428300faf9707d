package rejuv.rules.memory_near_limit_test

import data.rejuv.rules.memory_near_limit

# defaults is the rule's default parameters as the engine resolves them
# (rules_test.go checks it against the METADATA).
defaults := {"fraction": 0.9}

# limit is 1e9 B, so the default threshold is 9e8 B.
limit := 1000000000

# container has a 1e9 B limit and a working set of 5e8 B unless overridden.
container(name, overrides) := object.union(
	object.remove(
		{
			"name": name,
			"kind": "container",
			"image": "shop/web:1.0",
			"ready": true,
			"started": true,
			"state": "running",
			"startedAt": "2026-03-01T08:00:00Z",
			"restartCount": 0,
			"lastTermination": null,
			"notReadySince": null,
			"resources": {"requests": {"memory": 268435456}, "limits": {"memory": limit}},
			"memory": using(500000000),
			"recreations": {"total": 0, "last": null},
		},
		object.keys(overrides),
	),
	overrides,
)

using(bytes) := {
	"workingSetBytes": bytes,
	"samples": 1,
	"windowSeconds": 0,
	"slopeBytesPerSecond": null,
	"r2": null,
}

pod_input(containers, params) := {
	"now": "2026-03-01T12:00:00Z",
	"policy": {"name": "web-health", "namespace": "shop"},
	"parameters": params,
	"pod": {"metadata": {"name": "web-0", "namespace": "shop", "uid": "6f1c2d3e-0000-4000-8000-000000000001"}},
	"containers": containers,
}

recreate(containers, params) := rs if {
	rs := memory_near_limit.recreate with input as pod_input(containers, params)
}

no_data(containers, params) := nd if {
	nd := memory_near_limit.no_data with input as pod_input(containers, params)
}

test_working_set_exactly_at_fraction_is_recreated if {
	cs := [container("app", {"memory": using(900000000)})]
	recreate(cs, defaults) == {{"container": "app", "reason": "working set 858.31Mi is 90% of the 953.67Mi memory limit (threshold 90%)"}}
	no_data(cs, defaults) == set()
}

test_working_set_just_below_fraction_is_not_recreated if {
	cs := [container("app", {"memory": using(899999999)})]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_working_set_above_limit_is_recreated if {
	cs := [container("app", {"memory": using(1073741824), "resources": {"limits": {"memory": 1073741824}}})]
	recreate(cs, defaults) == {{"container": "app", "reason": "working set 1Gi is 100% of the 1Gi memory limit (threshold 90%)"}}
}

test_other_fraction if {
	cs := [container("app", {"memory": using(750000000)})]
	recreate(cs, {"fraction": 0.75}) == {{"container": "app", "reason": "working set 715.26Mi is 75% of the 953.67Mi memory limit (threshold 75%)"}}
	recreate(cs, {"fraction": 0.755}) == set()
}

test_missing_memory_is_no_data_not_zero if {
	cs := [container("app", {"memory": null}), object.remove(container("side", {}), ["memory"])]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "memory"}, {"container": "side", "signal": "memory"}}
}

test_missing_limit_is_no_data if {
	cs := [
		container("app", {"memory": using(2000000000), "resources": {"requests": {"memory": 1000000000}}}),
		container("side", {"memory": using(2000000000), "resources": {}}),
	]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {
		{"container": "app", "signal": "resources.limits.memory"},
		{"container": "side", "signal": "resources.limits.memory"},
	}
}

test_missing_memory_and_limit_are_both_reported if {
	cs := [container("app", {"memory": null, "resources": {}})]
	no_data(cs, defaults) == {
		{"container": "app", "signal": "memory"},
		{"container": "app", "signal": "resources.limits.memory"},
	}
}

test_only_the_container_near_its_limit_is_recreated if {
	cs := [container("app", {"memory": using(950000000)}), container("proxy", {})]
	{r.container | some r in recreate(cs, defaults)} == {"app"}
}

test_sidecar_is_recreated_too if {
	cs := [container("app", {}), container("log-shipper", {"kind": "sidecar", "memory": using(950000000)})]
	{r.container | some r in recreate(cs, defaults)} == {"log-shipper"}
}

test_zero_limit_and_odd_values_are_no_data if {
	cs := [
		container("app", {"resources": {"limits": {"memory": 0}}}),
		container("side", {"memory": using("500Mi")}),
		container("init", {"memory": {"workingSetBytes": null}}),
	]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {
		{"container": "app", "signal": "resources.limits.memory"},
		{"container": "side", "signal": "memory"},
		{"container": "init", "signal": "memory"},
	}
}

test_fraction_counts_to_the_millionth if {
	recreate([container("app", {"memory": using(900001000)})], {"fraction": 0.900001}) != set()
	recreate([container("app", {"memory": using(900000999)})], {"fraction": 0.900001}) == set()
}

test_limits_over_two_gibibytes if {
	big := {"resources": {"limits": {"memory": 68719476736}}}
	recreate([container("app", object.union(big, {"memory": using(61847529063)}))], defaults) != set()
	recreate([container("app", object.union(big, {"memory": using(61847529062)}))], defaults) == set()
}
