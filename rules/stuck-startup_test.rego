package rejuv.rules.stuck_startup_test

import data.rejuv.rules.stuck_startup

# defaults is the rule's default parameters as the engine resolves them
# (rules_test.go checks it against the METADATA).
defaults := {"startupFor": 600}

# container is running since 10:00 and started unless overridden; now is 12:00.
container(name, overrides) := object.union(
	object.remove(
		{
			"name": name,
			"kind": "container",
			"image": "shop/web:1.0",
			"ready": true,
			"started": true,
			"state": "running",
			"startedAt": "2026-03-01T10:00:00Z",
			"restartCount": 0,
			"lastTermination": null,
			"notReadySince": null,
			"resources": {},
			"memory": null,
			"recreations": {"total": 0, "last": null},
		},
		object.keys(overrides),
	),
	overrides,
)

starting_since(ts) := {"ready": false, "started": false, "startedAt": ts, "notReadySince": ts}

pod_input(containers, params) := {
	"now": "2026-03-01T12:00:00Z",
	"policy": {"name": "web-health", "namespace": "shop"},
	"parameters": params,
	"pod": {"metadata": {"name": "web-0", "namespace": "shop", "uid": "6f1c2d3e-0000-4000-8000-000000000001"}},
	"containers": containers,
}

recreate(containers, params) := rs if {
	rs := stuck_startup.recreate with input as pod_input(containers, params)
}

no_data(containers, params) := nd if {
	nd := stuck_startup.no_data with input as pod_input(containers, params)
}

test_not_started_exactly_for_threshold_is_recreated if {
	cs := [container("app", starting_since("2026-03-01T11:50:00Z"))]
	recreate(cs, defaults) == {{"container": "app", "reason": "startup not finished 10m after the container started (threshold 10m)", "force": true}}
	no_data(cs, defaults) == set()
}

test_not_started_just_below_threshold_is_not_recreated if {
	cs := [container("app", starting_since("2026-03-01T11:50:00.000000001Z"))]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_reason_has_measured_time if {
	cs := [container("app", starting_since("2026-03-01T11:14:15Z"))]
	recreate(cs, {"startupFor": 1800}) == {{"container": "app", "reason": "startup not finished 45m45s after the container started (threshold 30m)", "force": true}}
}

test_started_container_is_not_recreated if {
	cs := [container("app", {"startedAt": "2026-03-01T08:00:00Z", "ready": false})]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_unknown_started_is_no_data if {
	cs := [
		container("app", {"started": null}),
		object.remove(container("side", {}), ["started"]),
	]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "started"}, {"container": "side", "signal": "started"}}
}

test_unknown_start_time_is_no_data if {
	cs := [container("app", starting_since(null))]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "startedAt"}}
}

test_container_that_is_not_running_is_not_judged if {
	cs := [container("app", object.union(starting_since(null), {"state": "waiting", "started": null}))]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_only_the_stuck_container_is_recreated if {
	cs := [container("app", starting_since("2026-03-01T11:00:00Z")), container("proxy", starting_since("2026-03-01T11:59:00Z"))]
	{r.container | some r in recreate(cs, defaults)} == {"app"}
	no_data(cs, defaults) == set()
}

test_sidecar_is_recreated_too if {
	cs := [container("app", {}), container("mesh", object.union(starting_since("2026-03-01T11:00:00Z"), {"kind": "sidecar"}))]
	{r.container | some r in recreate(cs, defaults)} == {"mesh"}
}
