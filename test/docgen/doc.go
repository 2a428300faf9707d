// Package docgen holds what the tests that write generated documents
// share: reading a template, and writing the document (make docs) or
// failing while it is stale.
package docgen
