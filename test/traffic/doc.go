// Package traffic is a client that behaves as an app's users do while Rejuv
// restarts the app: it sends GET requests to a URL (a Service's cluster IP)
// at a steady rate, over kept-alive connections or a new connection each,
// and reports, by phase of the test (before, during and after a restart),
// how many it sent, how many failed and their latency.
//
// A request fails when it gets no answer within the timeout, an error from
// the connection, or a status other than 200 OK. Go's transport retries a
// GET on a reused connection that the server closed before answering, as
// browsers and most HTTP clients do; a retried request that then succeeds
// is not a failure, as its user never saw one.
package traffic
