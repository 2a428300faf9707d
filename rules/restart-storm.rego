# METADATA
# title: restart-storm
# description: >-
#   Recreates a container that keeps restarting for reasons other than Rejuv:
#   its restarts not done by Rejuv (restartCount minus Rejuv's recreations of
#   it) reach minRestarts and its last termination finished within window.
#   Kubernetes shows only the restart count since the pod was created and the
#   last termination, not a history, so the rule cannot tell a storm now from
#   restarts spread over the pod's life that ended with one recent restart;
#   pair it with the policy's cooldown so a container that keeps restarting is
#   not recreated again and again. Needs restartCount, Rejuv's recreation count
#   and, once the count is reached, the last termination's time; without them
#   the container is reported as having no data.
# custom:
#   parameters:
#     minRestarts:
#       type: integer
#       default: 5
#       description: Fewest restarts not done by Rejuv that count as a storm.
#     window:
#       type: duration
#       default: 15m
#       description: >-
#         How recently the last termination must have finished. The kubelet
#         waits at most 5m between restarts of a crashing container, so 15m
#         also catches containers that run a few minutes before they fail.
package rejuv.rules.restart_storm

# restartCount is compared first: it bounds the restarts not done by Rejuv and
# fails for most containers.
recreate contains {"container": c.name, "reason": reason} if {
	some c in input.containers
	c.restartCount >= input.parameters.minRestarts
	restarts := foreign_restarts(c)
	restarts >= input.parameters.minRestarts
	t := c.lastTermination
	is_string(t.finishedAt)
	finished_ns := time.parse_rfc3339_ns(t.finishedAt)
	finished_ns >= window_start_ns
	reason := sprintf(
		"restarted %v times besides Rejuv's recreations (threshold %v), the last %s ago (%s; window %s)",
		[
			restarts, input.parameters.minRestarts, rejuv.format_duration((now_ns - finished_ns) / 1e9),
			termination(t), rejuv.format_duration(input.parameters.window),
		],
	)
}

# Negated checks read fields with object.get: an undefined field inside `not`
# would make the expression fail rather than hold.
no_data contains {"container": c.name, "signal": "restartCount"} if {
	some c in input.containers
	not is_number(object.get(c, "restartCount", null))
}

no_data contains {"container": c.name, "signal": "recreations.total"} if {
	some c in input.containers
	c.restartCount >= input.parameters.minRestarts
	is_number(c.restartCount)
	not is_number(object.get(c, ["recreations", "total"], null))
}

no_data contains {"container": c.name, "signal": "lastTermination.finishedAt"} if {
	some c in input.containers
	c.restartCount >= input.parameters.minRestarts
	foreign_restarts(c) >= input.parameters.minRestarts
	not is_string(object.get(c, ["lastTermination", "finishedAt"], null))
}

now_ns := time.parse_rfc3339_ns(input.now)

# window_start_ns is the earliest termination inside the window; computing it
# once leaves one comparison per container.
window_start_ns := now_ns - (input.parameters.window * 1000000000)

# foreign_restarts is the number of the container's restarts not done by Rejuv.
foreign_restarts(c) := c.restartCount - c.recreations.total if {
	is_number(c.restartCount)
	is_number(c.recreations.total)
}

termination(t) := sprintf("%s, exit code %v", [t.reason, t.exitCode]) if {
	is_string(t.reason)
	t.reason != ""
	is_number(t.exitCode)
} else := sprintf("exit code %v", [t.exitCode]) if {
	is_number(t.exitCode)
} else := "cause unknown"
