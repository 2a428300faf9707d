# METADATA
# title: memory-leak
# description: >-
#   Recreates a container whose memory working set grows steadily. Rejuv fits
#   a least-squares line through the working set samples of the recent window;
#   once the window spans at least minObservation with at least minSamples
#   samples, the line fits with r2 of at least minFit, and the growth keeps
#   its pace (a least-squares parabola through the samples grows at the
#   window's end at least minSustained times as fast as at its start, and
#   the line through the window's last sixth at least minSustained times as
#   fast as the whole line: a warm-up or a one-time step slows down, and a
#   rise that has ended is flat at the end, a leak is neither), the
#   container is recreated when the line and the parabola's end both rise
#   by at least minGrowthPerHour (for a container with a memory limit, only
#   when the line reaches limitFraction of that limit within growthHorizon:
#   memory that follows the day's traffic falls again), or, for a container
#   with a memory limit, when it is projected to reach limitFraction of
#   that limit within horizon (so it is recreated gracefully before the
#   kernel kills it for running out of memory). A container whose previous instance the kernel
#   killed for running out of memory has shown how long it lasts: it is
#   recreated once its window (which starts with the instance) spans
#   oomLifetimeFraction of that time, if its working set grows steadily (the
#   same fit and pace) however short the window. Needs the memory signal (metrics.k8s.io or Prometheus); until the
#   window is long enough the rule reports no data instead of deciding.
# custom:
#   parameters:
#     minGrowthPerHour:
#       type: quantity
#       default: 20Mi
#       description: >-
#         Smallest growth of the working set per hour, along the fitted line,
#         that counts as a leak.
#     minObservation:
#       type: duration
#       default: 1h
#       description: >-
#         Shortest span of memory history to judge from; it keeps warm-up
#         (caches filling, heaps growing to their size) from passing for a leak.
#     minSamples:
#       type: integer
#       default: 10
#       description: Fewest working set samples in the window to judge from.
#     minFit:
#       type: fraction
#       default: 0.8
#       description: >-
#         Smallest coefficient of determination (r2) of the fitted line, so
#         that only steady growth counts, not a sawtooth or a single spike.
#     minSustained:
#       type: fraction
#       default: 0.8
#       description: >-
#         Smallest ratio of the growth at the window's end to the growth at
#         its start (the slopes of a parabola fitted through its samples),
#         and of the growth over its last sixth to the whole window's, so
#         that growth that slows down (a cache filling, a heap growing to
#         its size, a one-time step) or has stopped (a one-time load that
#         ended) does not count as a leak.
#     oomLifetimeFraction:
#       type: fraction
#       default: 0.75
#       description: >-
#         After the kernel killed the container's previous instance for
#         running out of memory, the fraction of that instance's lifetime
#         this one's window must span for it to be recreated, if its working
#         set grows steadily.
#     limitFraction:
#       type: fraction
#       default: 0.9
#       description: Fraction of the memory limit that the projection is compared with.
#     growthHorizon:
#       type: duration
#       default: 12h
#       description: >-
#         For a container with a memory limit, how soon its growth must bring
#         it to limitFraction of that limit along the fitted line for the
#         growth (at least minGrowthPerHour) to count as a leak. Memory that
#         follows the day's traffic rises for about half a day and falls
#         again; a slower rise is recreated once the horizon's projection
#         reaches the limit.
#     horizon:
#       type: duration
#       default: 1h
#       description: >-
#         How far ahead the working set is projected along the fitted line;
#         it is the lead time the rollout gates get to recreate the container
#         before it runs out of memory.
package rejuv.rules.memory_leak

# One entry per container: the most urgent reason wins (see leak_reason). The
# cheap comparisons come first: they fail for most containers, and for null.
recreate contains {"container": c.name, "reason": reason} if {
	some c in input.containers
	m := c.memory
	m.r2 >= input.parameters.minFit
	m.slopeBytesPerSecond > 0
	judgeable(m)
	sustained(m)
	is_number(m.workingSetBytes)
	reason := why(c, m)
}

# why is the reason to recreate: the trend's once the window is long
# enough, else (or when the trend is not a leak yet) the history's.
why(c, m) := reason if {
	has_history(m)
	reason := leak_reason(c, m)
} else := reason if {
	reason := oom_reason(c, m)
}

# Negated checks read fields with object.get: an undefined field inside `not`
# would make the expression fail rather than hold.
no_data contains {"container": c.name, "signal": "memory"} if {
	some c in input.containers
	not is_number(object.get(c, ["memory", "workingSetBytes"], null))
}

no_data contains {"container": c.name, "signal": "memory.history"} if {
	some c in input.containers
	is_number(c.memory.workingSetBytes)
	not has_history(c.memory)
	not lifetime_before(c)
}

# has_history holds when the window is long enough to judge and the fit exists.
has_history(m) if {
	judgeable(m)
	is_number(m.windowSeconds)
	m.windowSeconds >= input.parameters.minObservation
}

# judgeable holds when the window has enough samples and its fits exist.
judgeable(m) if {
	is_number(m.samples)
	m.samples >= input.parameters.minSamples
	is_number(m.slopeBytesPerSecond)
	is_number(m.r2)
	is_number(m.startSlopeBytesPerSecond)
	is_number(m.endSlopeBytesPerSecond)
	is_number(m.latestSlopeBytesPerSecond)
}

# lifetime_before is how long the container's previous instance ran before
# the kernel killed it for running out of memory, in seconds.
lifetime_before(c) := lifetime if {
	t := c.lastTermination
	t.reason == "OOMKilled"
	is_string(t.startedAt)
	is_string(t.finishedAt)
	lifetime := (time.parse_rfc3339_ns(t.finishedAt) - time.parse_rfc3339_ns(t.startedAt)) / 1e9
	lifetime > 0
}

# oom_reason is defined when the previous instance ran out of memory and
# this one's window, which starts with the instance, spans
# oomLifetimeFraction of that instance's lifetime. (The window, not the
# clock: the verdict stays the same for the same window, and a window that
# started late, after a manager's restart, only delays it.)
oom_reason(c, m) := sprintf(
	"the previous instance was killed for running out of memory after %s; this one's working set, watched for %s (%s%% of that; threshold %s%%), is %s and grows %s/h (r2 %s; %s)",
	[
		rejuv.format_duration(lifetime), rejuv.format_duration(m.windowSeconds),
		rejuv.format_number((m.windowSeconds * 100) / lifetime),
		rejuv.format_number(input.parameters.oomLifetimeFraction * 100),
		rejuv.format_bytes(m.workingSetBytes), rejuv.format_bytes(m.slopeBytesPerSecond * 3600),
		rejuv.format_number(m.r2), pace(m),
	],
) if {
	lifetime := lifetime_before(c)
	is_number(m.windowSeconds)
	m.windowSeconds >= input.parameters.oomLifetimeFraction * lifetime
}

# sustained holds when the growth keeps its pace: the parabola through the
# window grows at its end, at least minSustained times as fast as at its
# start (a window that was flat or shrinking at its start and grows now
# passes; a warm-up's growth falls along the window), and the window's last
# sixth still grows at least minSustained times as fast as the whole
# window's line (a rise that has ended is flat there, however steep the
# window's line through it).
sustained(m) if {
	m.endSlopeBytesPerSecond > 0
	m.endSlopeBytesPerSecond >= input.parameters.minSustained * m.startSlopeBytesPerSecond
	m.latestSlopeBytesPerSecond >= input.parameters.minSustained * m.slopeBytesPerSecond
}

# pace says how the growth kept its pace, for reasons.
pace(m) := sprintf("%s/h at the window's start, %s/h at its end; the last %s %s/h", [
	rejuv.format_bytes(m.startSlopeBytesPerSecond * 3600), rejuv.format_bytes(m.endSlopeBytesPerSecond * 3600),
	rejuv.format_duration(m.windowSeconds / 6), rejuv.format_bytes(m.latestSlopeBytesPerSecond * 3600),
])

# leak_reason is defined when the growth counts as a leak, and says why: the
# limit's reason for a container with a memory limit it is near, else the
# growth's (for a container with a limit, only when the growth fills it
# within growthHorizon).
leak_reason(c, m) := reason if {
	limit := memory_limit(c)
	reason := limit_reason(m, limit)
} else := reason if {
	limit := memory_limit(c)
	reason := growth_reason(m, limit)
} else := sprintf(
	"working set %s grows %s/h (r2 %s over %s; %s; threshold %s/h)",
	[
		rejuv.format_bytes(m.workingSetBytes), rejuv.format_bytes(m.slopeBytesPerSecond * 3600),
		rejuv.format_number(m.r2), rejuv.format_duration(m.windowSeconds), pace(m),
		rejuv.format_bytes(input.parameters.minGrowthPerHour),
	],
) if {
	not memory_limit(c)
	grows_fast(m)
}

# grows_fast holds when the line and the parabola's end both rise by at
# least minGrowthPerHour (a warm-up that has slowed to about
# minGrowthPerHour has a line a little steeper).
grows_fast(m) if {
	m.slopeBytesPerSecond * 3600 >= input.parameters.minGrowthPerHour
	m.endSlopeBytesPerSecond * 3600 >= input.parameters.minGrowthPerHour
}

# growth_reason is defined, for a container with a memory limit, when it
# grows fast and reaches limitFraction of its limit along the line within
# growthHorizon: memory that follows the day's traffic rises for about
# half a day and falls again, and a rise too slow to fill the limit in that
# time is left until the horizon's projection (limit_reason) finds it.
growth_reason(m, limit) := sprintf(
	"working set %s grows %s/h (r2 %s over %s; %s; threshold %s/h) and reaches %s%% of the %s memory limit in %s (growthHorizon %s)",
	[
		rejuv.format_bytes(m.workingSetBytes), rejuv.format_bytes(m.slopeBytesPerSecond * 3600),
		rejuv.format_number(m.r2), rejuv.format_duration(m.windowSeconds), pace(m),
		rejuv.format_bytes(input.parameters.minGrowthPerHour),
		rejuv.format_number(input.parameters.limitFraction * 100), rejuv.format_bytes(limit),
		rejuv.format_duration(((input.parameters.limitFraction * limit) - m.workingSetBytes) / m.slopeBytesPerSecond),
		rejuv.format_duration(input.parameters.growthHorizon),
	],
) if {
	grows_fast(m)
	m.workingSetBytes + (m.slopeBytesPerSecond * input.parameters.growthHorizon) >= input.parameters.limitFraction * limit
}

# limit_reason is defined when the working set is already past limitFraction
# of the limit, or reaches it along the line within the horizon.
limit_reason(m, limit) := sprintf(
	"working set %s is already %s%% of the %s memory limit and grows %s/h (r2 %s over %s; %s; threshold %s%%)",
	[
		rejuv.format_bytes(m.workingSetBytes), rejuv.format_number((m.workingSetBytes * 100) / limit),
		rejuv.format_bytes(limit), rejuv.format_bytes(m.slopeBytesPerSecond * 3600),
		rejuv.format_number(m.r2), rejuv.format_duration(m.windowSeconds), pace(m),
		rejuv.format_number(input.parameters.limitFraction * 100),
	],
) if {
	m.workingSetBytes >= input.parameters.limitFraction * limit
} else := sprintf(
	"working set %s grows %s/h (r2 %s over %s; %s) and reaches %s%% of the %s memory limit in %s (horizon %s)",
	[
		rejuv.format_bytes(m.workingSetBytes), rejuv.format_bytes(m.slopeBytesPerSecond * 3600),
		rejuv.format_number(m.r2), rejuv.format_duration(m.windowSeconds), pace(m),
		rejuv.format_number(input.parameters.limitFraction * 100), rejuv.format_bytes(limit),
		rejuv.format_duration(((input.parameters.limitFraction * limit) - m.workingSetBytes) / m.slopeBytesPerSecond),
		rejuv.format_duration(input.parameters.horizon),
	],
) if {
	m.workingSetBytes + (m.slopeBytesPerSecond * input.parameters.horizon) >= input.parameters.limitFraction * limit
}

memory_limit(c) := c.resources.limits.memory if {
	is_number(c.resources.limits.memory)
	c.resources.limits.memory > 0
}
