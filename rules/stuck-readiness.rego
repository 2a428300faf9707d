# METADATA
# title: stuck-readiness
# description: >-
#   Recreates a running container that has not been ready for at least
#   notReadyFor. The time counts from when Rejuv first saw the container not
#   ready, or from the container's start if it started later (a container
#   restarted by the kubelet starts afresh). A container whose startup probe has
#   not passed yet (started is false) is left to stuck-startup. Needs the
#   not-ready time Rejuv records; a container that is not ready while that time
#   is unknown (for example just after the manager started) is reported as
#   having no data.
# custom:
#   parameters:
#     notReadyFor:
#       type: duration
#       default: 10m
#       description: >-
#         How long a running container may stay not ready before it is
#         recreated.
package rejuv.rules.stuck_readiness

recreate contains {"container": c.name, "reason": reason} if {
	some c in input.containers
	c.ready == false
	c.state == "running"
	object.get(c, "started", null) != false
	is_string(c.notReadySince)
	since_ns := not_ready_since_ns(c)
	since_ns <= cutoff_ns
	reason := sprintf(
		"not ready for %s (threshold %s)",
		[rejuv.format_duration((now_ns - since_ns) / 1e9), rejuv.format_duration(input.parameters.notReadyFor)],
	)
}

# Negated checks read fields with object.get: an undefined field inside `not`
# would make the expression fail rather than hold.
no_data contains {"container": c.name, "signal": "notReadySince"} if {
	some c in input.containers
	c.ready == false
	c.state == "running"
	object.get(c, "started", null) != false
	not is_string(object.get(c, "notReadySince", null))
}

now_ns := time.parse_rfc3339_ns(input.now)

# cutoff_ns is the latest not-ready time that is due now; computing it once
# leaves one comparison per container.
cutoff_ns := now_ns - (input.parameters.notReadyFor * 1000000000)

# not_ready_since_ns counts from the container's start if it started after
# Rejuv first saw it not ready.
not_ready_since_ns(c) := max([time.parse_rfc3339_ns(c.notReadySince), time.parse_rfc3339_ns(c.startedAt)]) if {
	is_string(c.startedAt)
} else := time.parse_rfc3339_ns(c.notReadySince)
