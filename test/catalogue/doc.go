// Package catalogue reads the metrics the manager and the daemon register,
// with their types, labels and meanings. Its test writes them into
// docs/metrics.md (make docs) and fails while that file is stale. It also
// holds the diagram of how Rejuv's parts fit (architecture.go), which
// another test draws into docs/architecture.svg the same way.
package catalogue
