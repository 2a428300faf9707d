package rejuv.rules.restart_storm_test

import data.rejuv.rules.restart_storm

# defaults is the rule's default parameters as the engine resolves them
# (rules_test.go checks it against the METADATA).
defaults := {"minRestarts": 5, "window": 900}

# container has never restarted unless overridden; now is 12:00.
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

# crashed is a container restarted n times, the last one ending at finished.
crashed(n, finished) := {
	"state": "waiting",
	"ready": false,
	"startedAt": null,
	"restartCount": n,
	"lastTermination": {"reason": "Error", "exitCode": 1, "finishedAt": finished},
}

pod_input(containers, params) := {
	"now": "2026-03-01T12:00:00Z",
	"policy": {"name": "web-health", "namespace": "shop"},
	"parameters": params,
	"pod": {"metadata": {"name": "web-0", "namespace": "shop", "uid": "6f1c2d3e-0000-4000-8000-000000000001"}},
	"containers": containers,
}

recreate(containers, params) := rs if {
	rs := restart_storm.recreate with input as pod_input(containers, params)
}

no_data(containers, params) := nd if {
	nd := restart_storm.no_data with input as pod_input(containers, params)
}

test_restarts_exactly_at_threshold_are_recreated if {
	cs := [container("app", crashed(5, "2026-03-01T11:58:00Z"))]
	recreate(cs, defaults) == {{"container": "app", "reason": "restarted 5 times besides Rejuv's recreations (threshold 5), the last 2m ago (Error, exit code 1; window 15m)"}}
	no_data(cs, defaults) == set()
}

test_restarts_below_threshold_are_not_recreated if {
	cs := [container("app", crashed(4, "2026-03-01T11:58:00Z"))]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_recreations_by_rejuv_do_not_count if {
	cs := [container("app", object.union(crashed(7, "2026-03-01T11:58:00Z"), {"recreations": {"total": 3, "last": "2026-03-01T11:58:00Z"}}))]
	recreate(cs, defaults) == set()
	more := [container("app", object.union(crashed(8, "2026-03-01T11:58:00Z"), {"recreations": {"total": 3, "last": "2026-03-01T11:00:00Z"}}))]
	{r.container | some r in recreate(more, defaults)} == {"app"}
}

test_last_termination_exactly_at_window_is_recreated if {
	cs := [container("app", crashed(9, "2026-03-01T11:45:00Z"))]
	recreate(cs, defaults) == {{"container": "app", "reason": "restarted 9 times besides Rejuv's recreations (threshold 5), the last 15m ago (Error, exit code 1; window 15m)"}}
}

test_last_termination_just_outside_window_is_not_recreated if {
	cs := [container("app", crashed(9, "2026-03-01T11:44:59.999999999Z"))]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_termination_without_reason_is_described_by_exit_code if {
	cs := [container("app", object.union(crashed(6, "2026-03-01T11:59:30Z"), {"lastTermination": {"reason": null, "exitCode": 137}}))]
	recreate(cs, {"minRestarts": 6, "window": 60}) == {{"container": "app", "reason": "restarted 6 times besides Rejuv's recreations (threshold 6), the last 30s ago (exit code 137; window 1m)"}}
}

test_unknown_last_termination_is_no_data_once_the_count_is_reached if {
	cs := [
		container("app", object.union(crashed(6, null), {"lastTermination": null})),
		container("side", crashed(6, null)),
		container("calm", object.union(crashed(4, null), {"lastTermination": null})),
	]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {
		{"container": "app", "signal": "lastTermination.finishedAt"},
		{"container": "side", "signal": "lastTermination.finishedAt"},
	}
}

test_unknown_restart_count_is_no_data if {
	cs := [container("app", {"restartCount": null}), object.remove(container("side", {}), ["restartCount"])]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "restartCount"}, {"container": "side", "signal": "restartCount"}}
}

test_unknown_recreations_is_no_data_not_zero if {
	cs := [
		container("app", object.union(crashed(6, "2026-03-01T11:58:00Z"), {"recreations": null})),
		container("calm", object.union(crashed(1, "2026-03-01T11:58:00Z"), {"recreations": null})),
	]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "recreations.total"}}
}

test_only_the_storming_container_is_recreated if {
	cs := [container("app", crashed(12, "2026-03-01T11:59:00Z")), container("proxy", crashed(12, "2026-03-01T09:00:00Z"))]
	{r.container | some r in recreate(cs, defaults)} == {"app"}
}

test_sidecar_is_recreated_too if {
	cs := [container("app", {}), container("mesh", object.union(crashed(5, "2026-03-01T11:59:00Z"), {"kind": "sidecar"}))]
	{r.container | some r in recreate(cs, defaults)} == {"mesh"}
}
