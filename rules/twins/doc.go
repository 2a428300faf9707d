// Package twins holds built-in rules' twins in Go (policy.NativeRule): the
// memory rules, which every sample of every memory window evaluates again,
// judged by comparisons instead of the Rego evaluator's steps. A twin is
// built from the rule's resolved parameters and judges every container as
// the rule's module does, with the same reasons; the module stays the
// rule's definition, and the package's tests hold each twin to it.
package twins
