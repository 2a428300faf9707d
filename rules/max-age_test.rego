package rejuv.rules.max_age_test

import data.rejuv.rules.max_age

# defaults is the rule's default parameters as the engine resolves them
# (rules_test.go checks it against the METADATA).
defaults := {"maxAge": 86400, "jitter": 3600}

no_jitter := {"maxAge": 86400, "jitter": 0}

# The MD5 of this UID starts with b982703c, so its jitter is
# 0xb982703c / 2^32 = 0.72464658 of the jitter parameter: 2608.73s of 1h.
uid := "6f1c2d3e-0000-4000-8000-000000000001"

# container is running since 10:00 unless overridden; now is 12:00.
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

pod_input(containers, params, pod_uid) := {
	"now": "2026-03-01T12:00:00Z",
	"policy": {"name": "web-health", "namespace": "shop"},
	"parameters": params,
	"pod": {"metadata": {"name": "web-0", "namespace": "shop", "uid": pod_uid}},
	"containers": containers,
}

recreate(containers, params) := rs if {
	rs := max_age.recreate with input as pod_input(containers, params, uid)
}

no_data(containers, params) := nd if {
	nd := max_age.no_data with input as pod_input(containers, params, uid)
}

jitter_of(pod_uid, params) := j if {
	j := max_age.jitter with input as pod_input([], params, pod_uid)
}

test_age_exactly_at_max_age_is_recreated_without_jitter if {
	cs := [container("app", {"startedAt": "2026-02-28T12:00:00Z"})]
	recreate(cs, no_jitter) == {{"container": "app", "reason": "running for 24h (maxAge 24h + jitter 0s for this pod)"}}
	no_data(cs, no_jitter) == set()
}

test_age_just_below_max_age_is_not_recreated if {
	cs := [container("app", {"startedAt": "2026-02-28T12:00:00.000000001Z"})]
	recreate(cs, no_jitter) == set()
}

test_jitter_delays_this_pod_by_its_share if {
	due := [container("app", {"startedAt": "2026-02-28T11:16:31Z"})]
	recreate(due, defaults) == {{"container": "app", "reason": "running for 24h43m29s (maxAge 24h + jitter 43m29s for this pod)"}}
	early := [container("app", {"startedAt": "2026-02-28T11:16:32Z"})]
	recreate(early, defaults) == set()
}

test_jitter_is_the_uid_hash_share_of_the_parameter if {
	abs(jitter_of(uid, defaults) - 2608.7276961654425) < 0.000001
	abs(jitter_of("ffffffff-2222-4000-8000-000000000003", defaults) - 892.8597098216414) < 0.000001
}

test_jitter_is_stable_and_within_bounds if {
	uids := ["a", "b", "6f1c2d3e-0000-4000-8000-000000000001", "0b7e8a52-1111-4000-8000-000000000002"]
	every u in uids {
		jitter_of(u, defaults) == jitter_of(u, defaults)
		jitter_of(u, defaults) >= 0
		jitter_of(u, defaults) < 3600
		jitter_of(u, no_jitter) == 0
	}
	count({jitter_of(u, defaults) | some u in uids}) == count(uids)
}

test_missing_uid_still_has_a_jitter if {
	j := max_age.jitter with input as {"parameters": defaults, "pod": {"metadata": {}}}
	j >= 0
	j < 3600
}

test_unknown_start_is_no_data if {
	cs := [container("app", {"startedAt": null}), object.remove(container("side", {}), ["startedAt"])]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == {{"container": "app", "signal": "startedAt"}, {"container": "side", "signal": "startedAt"}}
}

test_container_that_is_not_running_is_not_judged if {
	cs := [container("app", {"state": "terminated", "startedAt": null})]
	recreate(cs, defaults) == set()
	no_data(cs, defaults) == set()
}

test_only_the_old_container_is_recreated if {
	cs := [container("app", {"startedAt": "2026-02-20T00:00:00Z"}), container("proxy", {})]
	{r.container | some r in recreate(cs, defaults)} == {"app"}
}

test_sidecar_is_recreated_too if {
	cs := [container("app", {}), container("mesh", {"kind": "sidecar", "startedAt": "2026-02-20T00:00:00Z"})]
	{r.container | some r in recreate(cs, defaults)} == {"mesh"}
}
