package v1beta1

import "time"

// SoonestWake is when a controller of requests (the manager's or a
// node's daemon) looks at a request again: the shortest of the positive
// waits its pass found (a deadline, a back-off, a grace), or 0, not before
// the next event, when there is none.
func SoonestWake(waits []time.Duration) time.Duration {
	var soonest time.Duration
	for _, d := range waits {
		if d > 0 && (soonest == 0 || d < soonest) {
			soonest = d
		}
	}
	return soonest
}
