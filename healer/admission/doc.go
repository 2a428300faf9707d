// Package admission owns the manager's admission webhooks for
// ContainerRecreateRequests: the mutating webhook that records each
// container's identity and copies what the daemon needs from the pod, and the
// validating webhook that rejects requests that cannot be carried out and
// checks that the requester may disrupt the pod. It does not execute CRRs.
package admission
