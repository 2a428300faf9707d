package rules

import "embed"

// files holds every rule and its Rego tests; only the rules (not *_test.rego)
// become catalog entries.
//
//go:embed *.rego
var files embed.FS
