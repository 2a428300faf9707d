# METADATA
# title: memory-near-limit
# description: >-
#   Recreates a container whose memory working set has reached fraction of its
#   memory limit, so that it restarts gracefully (preStop, termination grace)
#   instead of being killed by the kernel when it runs out of memory. Needs the
#   memory signal (metrics.k8s.io or Prometheus) and a memory limit on the
#   container; a container without either is reported as having no data.
# custom:
#   parameters:
#     fraction:
#       type: fraction
#       default: 0.9
#       description: >-
#         Fraction of the memory limit at or above which the container is
#         recreated (to the millionth).
package rejuv.rules.memory_near_limit

recreate contains {"container": c.name, "reason": reason} if {
	some c in input.containers
	limit := c.resources.limits.memory
	limit > 0
	ws := c.memory.workingSetBytes
	is_number(ws)

	# In whole numbers, the fraction in millionths: the evaluator does
	# arithmetic on integers of up to 31 bits fast, on fractions slowly.
	ws * 1000000 >= limit * fraction_millionths
	reason := sprintf(
		"working set %s is %s%% of the %s memory limit (threshold %s%%)",
		[format_bytes(ws), format_number((ws * 100) / limit), format_bytes(limit), format_number(input.parameters.fraction * 100)],
	)
}

fraction_millionths := round(input.parameters.fraction * 1000000)

# A missing, null or non-numeric working set is no data. (object.get
# because a missing reference in a call's argument would make the whole
# body undefined rather than the negation true.)
no_data contains {"container": c.name, "signal": "memory"} if {
	some c in input.containers
	not is_number(object.get(c, ["memory", "workingSetBytes"], null))
}

# So is a missing limit, or one that is not above zero.
no_data contains {"container": c.name, "signal": "resources.limits.memory"} if {
	some c in input.containers
	not object.get(c, ["resources", "limits", "memory"], null) > 0
}

# Formatting helpers. Every rule carries its own copy so that it stays one
# self-contained module; rules_test.go checks that the copies are identical.

# format_duration renders seconds like a Go duration without zero units:
# 750 is "12m30s", 3600 is "1h", 0 is "0s".
format_duration(seconds) := "0s" if {
	round(seconds) < 1
} else := concat("", [sprintf("%d%s", [n, unit]) |
	t := round(seconds)
	some [n, unit] in [[floor(t / 3600), "h"], [floor((t % 3600) / 60), "m"], [t % 60, "s"]]
	n > 0
])

# format_bytes renders a byte count as a binary Kubernetes quantity: 52428800
# is "50Mi", 123456789 is "117.74Mi".
format_bytes(b) := sprintf("%sGi", [format_number(b / 1073741824)]) if {
	b >= 1073741824
} else := sprintf("%sMi", [format_number(b / 1048576)]) if {
	b >= 1048576
} else := sprintf("%sKi", [format_number(b / 1024)]) if {
	b >= 1024
} else := format_number(b)

# format_number renders a number that is not negative with at most two
# decimals: 50, 117.7, 0.93.
format_number(x) := sprintf("%d", [floor(h / 100)]) if {
	h := round(x * 100)
	h % 100 == 0
} else := sprintf("%d.%d", [floor(h / 100), floor((h % 100) / 10)]) if {
	h := round(x * 100)
	h % 10 == 0
} else := sprintf("%d.%02d", [floor(h / 100), h % 100]) if {
	h := round(x * 100)
}
