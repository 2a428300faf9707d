// Package uninstall prepares Rejuv's removal, so that nothing it began is
// left half-done: it pauses every recreation cluster-wide until the
// installation is gone (the emergency stop, owned by the manager's
// ServiceAccount, which an uninstall deletes after the CRDs), has the
// manager end every request, and waits until no pod is held out of its
// Services by the readiness gate. The chart runs it as a pre-delete hook
// (rejuv-healer prepare-uninstall); kubectl rejuv pause --all
// --end-requests is the same step for the other install paths.
package uninstall
