// Package rules owns Rejuv's built-in Rego rules (NAME.rego with NAME_test.rego,
// embedded), their catalog read from each module's METADATA and the checking of
// their parameters. Rules only read the input document that package policy builds.
package rules
