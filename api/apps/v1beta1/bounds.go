package v1beta1

// MaxActiveRequestsPerPod bounds the requests of one pod that have not
// completed. A pod's requests run one at a time, and every event of the pod
// or of one of them concerns all of them (the daemon and the manager look
// at each again): the bound keeps that work small.
const MaxActiveRequestsPerPod = 16

// Bounds on a request's size, which its author would otherwise decide (its
// annotations alone may take 256 KiB): the manager keeps every request in
// memory in every replica, and each daemon its node's. They also keep a
// page of 500 requests (what kubectl and informers ask for) within one
// conversion review, which the conversion webhook reads up to 16 MiB
// (admission.MaxConversionBytes), should an API server convert a list in
// one review; today's converts each object on its own as it reads it.
const (
	// MaxRequestBytes bounds a request as stored, in JSON: 500 of them
	// take 16,000 KiB, which leaves a review 384 KiB for its envelope.
	MaxRequestBytes = 32 << 10
	// MaxAdmittedRequestBytes bounds what a request's author decides of
	// it, in JSON: everything but its status (its metadata, managed
	// fields included, and its spec as the webhook fills it in), when it
	// is created and when an update makes it larger. The rest of
	// MaxRequestBytes is for the status the daemon and the manager write.
	MaxAdmittedRequestBytes = 16 << 10
	// MaxRequestContainers bounds the containers of one request, so that
	// their states in the status fit what MaxAdmittedRequestBytes leaves.
	MaxRequestContainers = 16
)
