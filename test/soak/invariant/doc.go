// Package invariant checks Rejuv's safety promises from outside, over what
// a soak run observed: the pods, requests, policies and budgets as watched
// from the API server, the faults injected, the clients' failures and
// Rejuv's own pods. It never reads Rejuv's own account of what it did
// where the cluster can say it. Each broken promise is a Violation with
// its evidence.
package invariant
