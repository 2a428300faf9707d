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
		[rejuv.format_bytes(ws), rejuv.format_number((ws * 100) / limit), rejuv.format_bytes(limit), rejuv.format_number(input.parameters.fraction * 100)],
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
