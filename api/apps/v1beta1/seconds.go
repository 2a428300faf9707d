package v1beta1

import (
	"math"
	"time"
)

// maxDurationSeconds is the most whole seconds a time.Duration holds
// (about 292 years). A runtime that turns a stop's timeout in seconds into
// nanoseconds, as containerd does, does not wrap below it either.
const maxDurationSeconds = math.MaxInt64 / int64(time.Second)

// SecondsDuration is n seconds of a request's or a policy's spec as a
// time.Duration, never wrapped: more than a time.Duration holds is its
// longest (the API's bounds refuse such values, but a request admitted
// before them, or where no webhook checks, may still carry one), less than
// zero is zero. Every conversion of such seconds goes through it.
func SecondsDuration(n int64) time.Duration {
	return time.Duration(min(max(n, 0), maxDurationSeconds)) * time.Second
}
