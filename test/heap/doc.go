// Package heap measures the Go heap for the tests and benchmarks that
// state what something keeps in memory.
package heap
