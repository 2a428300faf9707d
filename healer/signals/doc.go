// Package signals evaluates a policy's named PromQL queries and hands
// their values to the rules, per pod and per container, with the reason
// for every value that is missing.
package signals
