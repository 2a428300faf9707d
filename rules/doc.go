// Package rules owns Rejuv's built-in Rego rule library: one .rego file per rule
// with its Rego unit tests, embedded into the binaries. Rules only read the
// input document defined by package policy.
package rules
