package rejuv.rules.memory_leak_test

import data.rejuv.rules.memory_leak

# defaults is the rule's default parameters as the engine resolves them
# (rules_test.go checks it against the METADATA).
defaults := {
	"minGrowthPerHour": 20971520,
	"minObservation": 3600,
	"minSamples": 10,
	"minFit": 0.8,
	"minSustained": 0.8,
	"oomLifetimeFraction": 0.75,
	"limitFraction": 0.9,
	"horizon": 3600,
	"growthHorizon": 43200,
}

# leaking grows 10000 B/s (34.33Mi/h) with a good fit over an hour, the
# parabola through it 10000 B/s at the window's start and 9600 B/s
# (32.96Mi/h) at its end, its last 10 minutes 9800 B/s (33.65Mi/h).
leaking := {
	"workingSetBytes": 314572800,
	"samples": 120,
	"windowSeconds": 3600,
	"slopeBytesPerSecond": 10000,
	"r2": 0.95,
	"startSlopeBytesPerSecond": 10000,
	"endSlopeBytesPerSecond": 9600,
	"latestSlopeBytesPerSecond": 9800,
}

flat := object.union(leaking, {"slopeBytesPerSecond": 0, "r2": 0, "startSlopeBytesPerSecond": 0, "endSlopeBytesPerSecond": 0, "latestSlopeBytesPerSecond": 0})

# container is a healthy container with the given fields replaced.
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
			"resources": {"requests": {"memory": 268435456}, "limits": {}},
			"memory": leaking,
			"recreations": {"total": 0, "last": null},
		},
		object.keys(overrides),
	),
	overrides,
)

mem(overrides) := object.union(leaking, overrides)

pod_input(containers, params) := {
	"now": "2026-03-01T12:00:00Z",
	"policy": {"name": "web-health", "namespace": "shop"},
	"parameters": params,
	"pod": {"metadata": {"name": "web-0", "namespace": "shop", "uid": "6f1c2d3e-0000-4000-8000-000000000001"}},
	"containers": containers,
}

recreated(containers, params) := names if {
	names := {r.container | some r in memory_leak.recreate} with input as pod_input(containers, params)
}

reasons(containers, params) := rs if {
	rs := {r.reason | some r in memory_leak.recreate} with input as pod_input(containers, params)
}

no_data(containers, params) := nd if {
	nd := memory_leak.no_data with input as pod_input(containers, params)
}

test_steady_growth_is_recreated_with_measured_figures if {
	reasons([container("app", {})], defaults) == {"working set 300Mi grows 34.33Mi/h (r2 0.95 over 1h; 34.33Mi/h at the window's start, 32.96Mi/h at its end; the last 10m 33.65Mi/h; threshold 20Mi/h)"}
}

test_missing_memory_is_no_data_not_zero if {
	cs := [container("app", {"memory": null}), object.remove(container("side", {}), ["memory"])]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "memory"}, {"container": "side", "signal": "memory"}}
}

test_missing_working_set_is_no_data if {
	cs := [container("app", {"memory": object.remove(leaking, ["workingSetBytes"])})]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "memory"}}
}

test_too_few_samples_is_history_no_data if {
	cs := [container("app", {"memory": mem({"samples": 9})})]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "memory.history"}}
}

test_window_shorter_than_min_observation_is_history_no_data if {
	cs := [container("app", {"memory": mem({"windowSeconds": 3599})})]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "memory.history"}}
}

test_missing_fit_is_history_no_data if {
	cs := [container("app", {"memory": mem({"r2": null})})]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "memory.history"}}
}

test_window_and_samples_exactly_at_minimum_are_judged if {
	cs := [container("app", {"memory": mem({"samples": 10, "windowSeconds": 3600})})]
	recreated(cs, defaults) == {"app"}
	no_data(cs, defaults) == set()
}

test_growth_exactly_at_threshold_is_recreated if {
	params := object.union(defaults, {"minGrowthPerHour": 18000000})
	recreated([container("app", {"memory": mem({"slopeBytesPerSecond": 5000})})], params) == {"app"}
}

test_growth_just_below_threshold_is_not_recreated if {
	params := object.union(defaults, {"minGrowthPerHour": 18000000})
	recreated([container("app", {"memory": mem({"slopeBytesPerSecond": 4999})})], params) == set()
}

# A warm-up slowed to about minGrowthPerHour: its line is still a little
# steeper than the threshold, its parabola's end no longer.
test_growth_below_threshold_at_the_windows_end_is_not_recreated if {
	params := object.union(defaults, {"minGrowthPerHour": 18000000})
	slowed := {"slopeBytesPerSecond": 6000, "startSlopeBytesPerSecond": 6000}
	cs := [container("app", {"memory": mem(object.union(slowed, {"endSlopeBytesPerSecond": 4999}))})]
	recreated(cs, params) == set()
	no_data(cs, params) == set()
	recreated([container("app", {"memory": mem(object.union(slowed, {"endSlopeBytesPerSecond": 5000}))})], params) == {"app"}
}

test_missing_part_slopes_are_history_no_data if {
	cs := [
		container("app", {"memory": object.remove(leaking, ["endSlopeBytesPerSecond"])}),
		container("side", {"memory": mem({"startSlopeBytesPerSecond": null})}),
		container("proxy", {"memory": object.remove(leaking, ["latestSlopeBytesPerSecond"])}),
	]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "memory.history"}, {"container": "side", "signal": "memory.history"}, {"container": "proxy", "signal": "memory.history"}}
}

test_growth_keeping_exactly_min_sustained_of_its_pace_is_recreated if {
	recreated([container("app", {"memory": mem({"endSlopeBytesPerSecond": 8000})})], defaults) == {"app"}
}

# A warm-up slows down: at the window's end it grows at a fraction of its
# pace at the start.
test_growth_slowing_below_min_sustained_is_not_recreated if {
	cs := [container("app", {"memory": mem({"endSlopeBytesPerSecond": 7999})})]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

# A step that has passed: the window's end does not grow at all.
test_growth_that_stopped_is_not_recreated if {
	recreated([container("app", {"memory": mem({"startSlopeBytesPerSecond": 0, "endSlopeBytesPerSecond": 0})})], defaults) == set()
	recreated([container("app", {"memory": mem({"startSlopeBytesPerSecond": -50, "endSlopeBytesPerSecond": -10})})], defaults) == set()
}

# A one-time load that has ended: the window's line and parabola still rise
# through the load, but its last sixth no longer grows at minSustained of
# the line's pace.
test_growth_that_ended_is_not_recreated if {
	cs := [container("app", {"memory": mem({"latestSlopeBytesPerSecond": 7999})})]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == set()
	recreated([container("app", {"memory": mem({"latestSlopeBytesPerSecond": 0})})], defaults) == set()
	recreated([container("app", {"memory": mem({"latestSlopeBytesPerSecond": 8000})})], defaults) == {"app"}
}

# A leak that started during the window: flat or shrinking before, growing now.
test_growth_that_started_or_sped_up_is_recreated if {
	recreated([container("app", {"memory": mem({"startSlopeBytesPerSecond": -200, "endSlopeBytesPerSecond": 30000})})], defaults) == {"app"}
	recreated([container("app", {"memory": mem({"startSlopeBytesPerSecond": 5000, "endSlopeBytesPerSecond": 20000})})], defaults) == {"app"}
}

test_fit_exactly_at_min_fit_is_recreated if {
	recreated([container("app", {"memory": mem({"r2": 0.8})})], defaults) == {"app"}
}

test_fit_below_min_fit_is_not_recreated if {
	cs := [container("app", {"memory": mem({"r2": 0.79})})]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

# With a 1e9 B limit the projection target is 9e8 B; growing 1000 B/s (below
# minGrowthPerHour) the working set gains 3.6e6 B within the 1h horizon.
slow := {"slopeBytesPerSecond": 1000, "startSlopeBytesPerSecond": 1000, "endSlopeBytesPerSecond": 1000, "latestSlopeBytesPerSecond": 1000}

limited := {"resources": {"limits": {"memory": 1000000000}}}

test_projection_exactly_at_limit_fraction_is_recreated if {
	cs := [container("app", object.union(limited, {"memory": mem(object.union(slow, {"workingSetBytes": 896400000}))}))]
	reasons(cs, defaults) == {"working set 854.87Mi grows 3.43Mi/h (r2 0.95 over 1h; 3.43Mi/h at the window's start, 3.43Mi/h at its end; the last 10m 3.43Mi/h) and reaches 90% of the 953.67Mi memory limit in 1h (horizon 1h)"}
}

test_projection_just_short_of_limit_fraction_is_not_recreated if {
	cs := [container("app", object.union(limited, {"memory": mem(object.union(slow, {"workingSetBytes": 896399999}))}))]
	recreated(cs, defaults) == set()
}

test_growth_already_past_limit_fraction_is_recreated if {
	cs := [container("app", object.union(limited, {"memory": mem(object.union(slow, {"workingSetBytes": 950000000}))}))]
	reasons(cs, defaults) == {"working set 905.99Mi is already 95% of the 953.67Mi memory limit and grows 3.43Mi/h (r2 0.95 over 1h; 3.43Mi/h at the window's start, 3.43Mi/h at its end; the last 10m 3.43Mi/h; threshold 90%)"}
}

# Growing 10000 B/s, a container under the 1e9 B limit reaches its 9e8 B
# target within the 12h growthHorizon from 4.68e8 B on.
test_growth_reaching_the_limit_within_growth_horizon_is_recreated if {
	cs := [container("app", object.union(limited, {"memory": mem({"workingSetBytes": 468000000})}))]
	reasons(cs, defaults) == {"working set 446.32Mi grows 34.33Mi/h (r2 0.95 over 1h; 34.33Mi/h at the window's start, 32.96Mi/h at its end; the last 10m 33.65Mi/h; threshold 20Mi/h) and reaches 90% of the 953.67Mi memory limit in 12h (growthHorizon 12h)"}
}

# Memory that follows the day's traffic rises like this for hours and falls
# again: under a limit it would take longer than growthHorizon to fill, the
# growth alone is no leak; without a limit it is.
test_growth_short_of_the_limit_within_growth_horizon_is_not_recreated if {
	cs := [container("app", object.union(limited, {"memory": mem({"workingSetBytes": 467999999})}))]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == set()
	recreated([container("app", {"memory": mem({"workingSetBytes": 467999999})})], defaults) == {"app"}
	longer := object.union(defaults, {"growthHorizon": 43201})
	recreated(cs, longer) == {"app"}
}

test_slow_growth_without_limit_is_not_recreated if {
	cs := [container("app", {"memory": mem(object.union(slow, {"workingSetBytes": 950000000}))})]
	recreated(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_shrinking_memory_near_limit_is_not_recreated if {
	cs := [container("app", object.union(limited, {"memory": mem({"workingSetBytes": 950000000, "slopeBytesPerSecond": -1000})}))]
	recreated(cs, defaults) == set()
}

test_projection_needs_good_fit if {
	cs := [container("app", object.union(limited, {"memory": mem({"workingSetBytes": 950000000, "r2": 0.5})}))]
	recreated(cs, defaults) == set()
}

test_only_the_leaking_container_is_recreated if {
	cs := [container("app", {}), container("proxy", {"memory": flat})]
	recreated(cs, defaults) == {"app"}
	no_data(cs, defaults) == set()
}

test_sidecar_is_recreated_too if {
	cs := [container("app", {"memory": flat}), container("log-shipper", {"kind": "sidecar"})]
	recreated(cs, defaults) == {"log-shipper"}
}

# oom_killed is a container whose previous instance ran 40 minutes before the
# kernel killed it for running out of memory, and whose window of minutes
# (shorter than minObservation) shows steady growth.
oom_killed(minutes) := container("app", {
	"restartCount": 1,
	"lastTermination": {"reason": "OOMKilled", "exitCode": 137, "startedAt": "2026-03-01T10:00:00Z", "finishedAt": "2026-03-01T10:40:00Z"},
	"memory": mem({"windowSeconds": minutes * 60, "samples": minutes * 2}),
})

test_oom_killed_before_is_recreated_at_its_lifetime_fraction if {
	reasons([oom_killed(30)], defaults) == {"the previous instance was killed for running out of memory after 40m; this one's working set, watched for 30m (75% of that; threshold 75%), is 300Mi and grows 34.33Mi/h (r2 0.95; 34.33Mi/h at the window's start, 32.96Mi/h at its end; the last 5m 33.65Mi/h)"}
	no_data([oom_killed(30)], defaults) == set()
}

test_oom_killed_before_is_not_recreated_younger if {
	recreated([oom_killed(29)], defaults) == set()
	no_data([oom_killed(29)], defaults) == set()
}

# An instance killed once by a burst, whose successor does not grow steadily.
test_oom_killed_before_needs_steady_growth if {
	killed := oom_killed(35)
	recreated([object.union(killed, {"memory": object.union(killed.memory, {"r2": 0.3})})], defaults) == set()
	recreated([object.union(killed, {"memory": object.union(killed.memory, {"endSlopeBytesPerSecond": 100})})], defaults) == set()
	recreated([object.union(killed, {"memory": object.union(killed.memory, {"slopeBytesPerSecond": -10})})], defaults) == set()
	recreated([object.union(killed, {"memory": object.union(killed.memory, {"samples": 9})})], defaults) == set()
}

test_other_terminations_teach_nothing if {
	killed := oom_killed(35)
	recreated([object.union(killed, {"lastTermination": object.union(killed.lastTermination, {"reason": "Error"})})], defaults) == set()
	recreated([object.union(killed, {"lastTermination": object.union(killed.lastTermination, {"startedAt": null})})], defaults) == set()
	no_data([object.union(killed, {"lastTermination": object.union(killed.lastTermination, {"reason": "Error"})})], defaults) == {{"container": "app", "signal": "memory.history"}}
}

# With the window long enough, a leak's own reason comes first.
test_trend_reason_wins_over_history if {
	reasons([object.union(oom_killed(35), {"memory": leaking})], defaults) == {"working set 300Mi grows 34.33Mi/h (r2 0.95 over 1h; 34.33Mi/h at the window's start, 32.96Mi/h at its end; the last 10m 33.65Mi/h; threshold 20Mi/h)"}
}
