package rejuv.rules.stuck_readiness_test

import data.rejuv.rules.stuck_readiness

# defaults is the rule's default parameters as the engine resolves them
# (rules_test.go checks it against the METADATA).
defaults := {"notReadyFor": 600}

# container is running since 10:00 and ready unless overridden; now is 12:00.
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

not_ready_since(ts) := {"ready": false, "notReadySince": ts}

pod_input(containers, params) := {
	"now": "2026-03-01T12:00:00Z",
	"policy": {"name": "web-health", "namespace": "shop"},
	"parameters": params,
	"pod": {"metadata": {"name": "web-0", "namespace": "shop", "uid": "6f1c2d3e-0000-4000-8000-000000000001"}},
	"containers": containers,
}

recreate(containers, params) := rs if {
	rs := stuck_readiness.recreate with input as pod_input(containers, params)
}

no_data(containers, params) := nd if {
	nd := stuck_readiness.no_data with input as pod_input(containers, params)
}

test_not_ready_exactly_for_threshold_is_recreated if {
	cs := [container("app", not_ready_since("2026-03-01T11:50:00Z"))]
	recreate(cs, defaults) == {{"container": "app", "reason": "not ready for 10m (threshold 10m)"}}
	no_data(cs, defaults) == set()
}

test_not_ready_just_below_threshold_is_not_recreated if {
	cs := [container("app", not_ready_since("2026-03-01T11:50:00.000000001Z"))]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_reason_has_measured_time if {
	cs := [container("app", not_ready_since("2026-03-01T11:47:30Z"))]
	recreate(cs, defaults) == {{"container": "app", "reason": "not ready for 12m30s (threshold 10m)"}}
	recreate(cs, {"notReadyFor": 5400}) == set()
}

test_unknown_not_ready_since_is_no_data if {
	cs := [
		container("app", {"ready": false}),
		object.remove(container("side", {"ready": false}), ["notReadySince"]),
	]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "notReadySince"}, {"container": "side", "signal": "notReadySince"}}
}

test_ready_container_needs_no_data if {
	cs := [container("app", {})]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_container_in_startup_probe_is_left_to_stuck_startup if {
	cs := [container("app", object.union(not_ready_since("2026-03-01T10:00:00Z"), {"started": false}))]
	recreate(cs, defaults) == set()
	no_data([container("app", {"ready": false, "started": false})], defaults) == set()
}

test_unknown_started_is_judged_by_readiness if {
	cs := [container("app", object.union(not_ready_since("2026-03-01T11:00:00Z"), {"started": null}))]
	recreate(cs, defaults) == {{"container": "app", "reason": "not ready for 1h (threshold 10m)"}}
}

test_container_that_is_not_running_is_not_recreated if {
	cs := [container("app", object.union(not_ready_since("2026-03-01T10:00:00Z"), {"state": "waiting", "startedAt": null}))]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_time_counts_from_a_later_container_start if {
	restarted := object.union(not_ready_since("2026-03-01T11:00:00Z"), {"startedAt": "2026-03-01T11:55:00Z"})
	recreate([container("app", restarted)], defaults) == set()
	long_ago := object.union(restarted, {"startedAt": "2026-03-01T11:50:00Z"})
	recreate([container("app", long_ago)], defaults) == {{"container": "app", "reason": "not ready for 10m (threshold 10m)"}}
}

test_unknown_start_counts_from_not_ready_since if {
	cs := [container("app", object.union(not_ready_since("2026-03-01T11:00:00Z"), {"startedAt": null}))]
	recreate(cs, defaults) == {{"container": "app", "reason": "not ready for 1h (threshold 10m)"}}
}

test_only_the_stuck_container_is_recreated if {
	cs := [container("app", not_ready_since("2026-03-01T11:00:00Z")), container("proxy", not_ready_since("2026-03-01T11:59:00Z"))]
	{r.container | some r in recreate(cs, defaults)} == {"app"}
	no_data(cs, defaults) == set()
}

test_sidecar_is_recreated_too if {
	cs := [container("app", {}), container("log-shipper", object.union(not_ready_since("2026-03-01T11:00:00Z"), {"kind": "sidecar"}))]
	{r.container | some r in recreate(cs, defaults)} == {"log-shipper"}
}
