# METADATA
# title: max-age
# description: >-
#   Recreates a container that has been running for longer than maxAge plus a
#   jitter, the routine rejuvenation of software that ages (slow leaks,
#   fragmentation, stale connections). The jitter is a fixed part of jitter for
#   each pod, derived from the pod UID, so that a fleet started together does
#   not come due together and one pod is always due at the same age. The age
#   counts from the start of the current container, so a restart of any kind
#   starts it afresh. Needs the container's start time; a running container
#   without it is reported as having no data.
# custom:
#   parameters:
#     maxAge:
#       type: duration
#       default: 24h
#       description: Age of a running container after which it is due for recreation.
#     jitter:
#       type: duration
#       default: 1h
#       allowZero: true
#       description: >-
#         Upper bound of the per-pod delay added to maxAge; each pod gets a
#         fixed delay in [0, jitter). 0s turns the jitter off.
package rejuv.rules.max_age

recreate contains {"container": c.name, "reason": reason} if {
	some c in input.containers
	c.state == "running"
	is_string(c.startedAt)
	started_ns := time.parse_rfc3339_ns(c.startedAt)
	started_ns <= max_age_cutoff_ns

	# The jitter costs a hash, so it is computed only once a container is due.
	started_ns <= jitter_cutoff_ns
	reason := sprintf(
		"running for %s (maxAge %s + jitter %s for this pod)",
		[rejuv.format_duration((now_ns - started_ns) / 1e9), rejuv.format_duration(input.parameters.maxAge), rejuv.format_duration(jitter)],
	)
}

# Negated checks read fields with object.get: an undefined field inside `not`
# would make the expression fail rather than hold.
no_data contains {"container": c.name, "signal": "startedAt"} if {
	some c in input.containers
	c.state == "running"
	not is_string(object.get(c, "startedAt", null))
}

now_ns := time.parse_rfc3339_ns(input.now)

# The cutoffs are the latest starts that are due now, without and with this
# pod's jitter; computing them once leaves comparisons per container.
max_age_cutoff_ns := now_ns - (input.parameters.maxAge * 1000000000)

jitter_cutoff_ns := max_age_cutoff_ns - (jitter * 1000000000)

# jitter is this pod's delay in seconds, in [0, jitter).
jitter := (input.parameters.jitter * pod_hash) / 4294967296

# pod_hash is the first 32 bits of the MD5 of the pod UID. Rego cannot parse
# hexadecimal, so the digits go through a table.
pod_hash := sum([v |
	some i, d in split(substring(crypto.md5(pod_uid), 0, 8), "")
	v := hex_digits[d] * hex_weights[i]
])

# The UID is read by its full path (not with object.get on input.pod), so
# the engine converts only that field of the pod.
pod_uid := uid if {
	uid := input.pod.metadata.uid
	is_string(uid)
} else := ""

hex_weights := [268435456, 16777216, 1048576, 65536, 4096, 256, 16, 1]

hex_digits := {
	"0": 0, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7,
	"8": 8, "9": 9, "a": 10, "b": 11, "c": 12, "d": 13, "e": 14, "f": 15,
}
