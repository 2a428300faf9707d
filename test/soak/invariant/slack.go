package invariant

import "time"

// Slack is how much the checker allows for what it cannot see exactly:
// watches that lag each other, status written after the fact, recovery
// after a fault.
type Slack struct {
	// Skew is how far apart two watches may report the same moment: a
	// state that breaks a promise for no longer than this may be an
	// artefact of the order events arrived in (the manager saw a pod Ready
	// before the soak did).
	Skew time.Duration
	// Attribution is how far apart a container's restart and the request
	// that caused it may be seen: a restart seen up to this long after its
	// request ended, or before the request was first seen, is still its.
	// It is also the grace before a run's report or a request's status is
	// compared with the restarts seen.
	Attribution time.Duration
	// RequestEnds is how long past its deadline a request may take to be
	// seen ended: the request controller's next pass and the status write.
	RequestEnds time.Duration
	// Held is how long a pod may stay out of service (KruisePodReady
	// False) with no request in flight: the time to put it back after its
	// request ends.
	Held time.Duration
	// Traffic is how long after a fault ends a client's failure is still
	// put down to it: connections to recycle, endpoints to settle.
	Traffic time.Duration
	// Component is how long after a fault ends a restart, departure or
	// arrival of a pod it hit is still put down to it: a crash-looping
	// replica's back-off, a replacement's scheduling.
	Component time.Duration
	// DefaultDeadline is a request's deadline when it sets no
	// activeDeadlineSeconds (a policy's requests get 600 s by default).
	DefaultDeadline time.Duration
}

// DefaultSlack is the slack for a soak on a small local cluster.
func DefaultSlack() Slack {
	return Slack{
		Skew:            time.Second,
		Attribution:     5 * time.Second,
		RequestEnds:     60 * time.Second,
		Held:            15 * time.Second,
		Traffic:         5 * time.Second,
		Component:       60 * time.Second,
		DefaultDeadline: 10 * time.Minute,
	}
}
