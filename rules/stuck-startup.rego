# METADATA
# title: stuck-startup
# description: >-
#   Recreates a running container whose startup probe has not passed
#   (started is false) at least startupFor after the container started, for
#   example one hung in initialisation while its startup probe allows a long
#   time. Needs the container's started flag and start time; a running
#   container without them is reported as having no data.
# custom:
#   parameters:
#     startupFor:
#       type: duration
#       default: 10m
#       description: >-
#         How long after its start a running container may stay not started
#         before it is recreated.
package rejuv.rules.stuck_startup

# force: a container hung while starting never finishes starting, so it is
# stopped at once rather than awaited (the request's forceRecreate).
recreate contains {"container": c.name, "reason": reason, "force": true} if {
	some c in input.containers
	c.started == false
	c.state == "running"
	is_string(c.startedAt)
	started_ns := time.parse_rfc3339_ns(c.startedAt)
	started_ns <= cutoff_ns
	reason := sprintf(
		"startup not finished %s after the container started (threshold %s)",
		[rejuv.format_duration((now_ns - started_ns) / 1e9), rejuv.format_duration(input.parameters.startupFor)],
	)
}

# Negated checks read fields with object.get: an undefined field inside `not`
# would make the expression fail rather than hold.
no_data contains {"container": c.name, "signal": "started"} if {
	some c in input.containers
	c.state == "running"
	not is_boolean(object.get(c, "started", null))
}

no_data contains {"container": c.name, "signal": "startedAt"} if {
	some c in input.containers
	c.started == false
	c.state == "running"
	not is_string(object.get(c, "startedAt", null))
}

now_ns := time.parse_rfc3339_ns(input.now)

# cutoff_ns is the latest start that is due now; computing it once leaves one
# comparison per container.
cutoff_ns := now_ns - (input.parameters.startupFor * 1000000000)
