// Package catalogue reads the metrics the manager and the daemon register,
// with their types, labels and meanings. Its test writes them into
// docs/metrics.md (make docs) and fails while that file is stale.
package catalogue
