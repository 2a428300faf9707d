package policy

import (
	"slices"
	"strconv"

	"github.com/open-policy-agent/opa/v1/ast"
)

// verdict is what the sandbox does with a built-in.
type verdict int

const (
	// allowed: its cost grows at most about linearly with its operands'
	// size, which the deadline, the memory bound and the bounds of the
	// built-ins that build values keep small, or it stops at the deadline.
	allowed verdict = iota
	// bounded: allowed once its operands pass a check made before the
	// call (bounds.go), because OPA cannot stop the call once it started.
	bounded
	// denied: rules cannot call it; a module that does is refused when it
	// is compiled.
	denied
)

func (v verdict) String() string {
	return [...]string{"allowed", "allowed within a bound", "denied"}[v]
}

// audited is a group of built-ins with one verdict and the reason for it.
// For a bounded group, bound makes the check of each built-in's operands,
// or result the check of its result (cheap to build, costly to read).
type audited struct {
	names   []string
	verdict verdict
	bound   func(name string) func([]*ast.Term) error
	result  func(name string) func(*ast.Term) error
	why     string
}

// audit is every built-in of the OPA version Rejuv is built with, and
// Rejuv's own: the sandbox allows only those allowed here, so a built-in a
// newer OPA adds is denied until it is audited (TestEveryBuiltinIsAudited
// fails until then). OPA checks for cancellation only between the steps of
// an evaluation and inside a few built-ins (numbers.range, and the writers
// of concat, replace, strings.replace_n and regex.replace); every other
// built-in runs to its end once called, whatever the deadline.
var audit = []audited{
	{names: []string{"assign", "eq", "print", "internal.member_2", "internal.member_3"}, verdict: allowed,
		why: "syntax (`:=`, `=`, `print`, `in`): evaluated step by step, or rewritten to another built-in"},
	{names: []string{
		"array.concat", "array.flatten", "array.reverse", "array.slice", "count", "type_name",
		"is_array", "is_boolean", "is_null", "is_number", "is_object", "is_set", "is_string",
		"object.filter", "object.get", "object.keys", "object.remove", "json.filter", "json.remove",
	}, verdict: allowed, why: "linear in its operands' length; parts are shared, not copied"},
	{names: []string{
		"contains", "endswith", "startswith", "indexof", "indexof_n", "lower", "upper", "split", "strings.split_n",
		"strings.count", "strings.reverse", "strings.any_prefix_match", "strings.any_suffix_match", "substring",
		"trim", "trim_left", "trim_prefix", "trim_right", "trim_space", "trim_suffix",
		"glob.quote_meta", "base64.decode", "base64.encode", "base64.is_valid", "base64url.decode",
		"base64url.encode", "base64url.encode_no_pad", "hex.decode", "hex.encode", "urlquery.decode",
		"urlquery.decode_object", "urlquery.encode", "uri.is_valid", "uri.parse", "uuid.parse",
		"semver.compare", "semver.is_valid", "json.is_valid", "json.unmarshal", "yaml.is_valid", "yaml.unmarshal",
		"crypto.md5", "crypto.sha1", "crypto.sha256", "crypto.hmac.equal", "crypto.hmac.md5", "crypto.hmac.sha1",
		"crypto.hmac.sha256", "crypto.hmac.sha512",
	}, verdict: allowed, why: "linear in its strings' length (the decoders limit nesting; YAML refuses alias bombs)"},
	{names: []string{"net.cidr_contains", "net.cidr_intersects", "net.cidr_is_valid", "net.cidr_merge"}, verdict: allowed,
		why: "parses and compares addresses (a pod's `status.podIP`), in time linear in them (sorting for net.cidr_merge)"},
	{names: []string{"replace", "strings.replace_n"}, verdict: allowed,
		why: "its writer stops at the deadline and the memory bound, however large the result would be"},
	{names: []string{
		"time.add_date", "time.clock", "time.date", "time.diff", "time.format", "time.parse_duration_ns",
		"time.parse_ns", "time.parse_rfc3339_ns", "time.weekday",
	}, verdict: allowed, why: "linear in its operands"},
	{names: []string{"time.now_ns"}, verdict: allowed,
		why: "the time of the evaluation, the same for every pod of a pass (input.now)"},
	{names: []string{"walk"}, verdict: allowed,
		why: "yields one path at a time, each a step of the evaluation the deadline stops"},
	{names: []string{"rego.metadata.chain", "rego.metadata.rule"}, verdict: allowed,
		why: "the rule's own annotations, no larger than the module"},
	{names: []string{"rejuv.format_bytes", "rejuv.format_duration", "rejuv.format_number"}, verdict: bounded, bound: numberBound,
		why: "Rejuv's own: write a number for a reason; its digits are bounded"},
	{names: []string{
		"plus", "minus", "mul", "div", "rem", "abs", "ceil", "floor", "round", "format_int", "to_number",
		"bits.and", "bits.or", "bits.xor", "bits.negate", "bits.rsh",
	}, verdict: bounded, bound: numberBound,
		why: "exact arithmetic on numbers of any length: one product of two 300,000-digit numbers takes 0.6 s; numbers are bounded to " + strconv.Itoa(MaxNumberChars) + " characters"},
	{names: []string{"sum", "product"}, verdict: bounded, bound: numbersBound,
		why: "the same arithmetic over a collection: each number and their total length are bounded"},
	{names: []string{"bits.lsh"}, verdict: bounded, bound: same(lshBound),
		why: "the result grows with the shift, which is bounded"},
	{names: []string{"numbers.range", "numbers.range_step"}, verdict: bounded, bound: rangeBound,
		why: "allocates its whole result at once: at most 100,000 numbers"},
	{names: []string{"concat"}, verdict: bounded, bound: same(concatBound),
		why: "its result, separators included, is bounded"},
	{names: []string{"sprintf"}, verdict: bounded, bound: same(sprintfBound),
		why: "its result, the verbs' widths included, is bounded; widths taken from the arguments (`*`) are refused"},
	{names: []string{"json.marshal_with_options"}, verdict: bounded, bound: same(prettyBound),
		why: "an indent is repeated for every level of every line: the indented result is bounded"},
	{names: []string{
		"json.marshal", "yaml.marshal", "urlquery.encode_object", "internal.print", "internal.template_string",
		"sort", "equal", "neq", "lt", "lte", "gt", "gte", "max", "min",
		"and", "or", "intersection", "union", "object.union", "object.union_n",
	}, verdict: bounded, bound: sizeBound,
		why: "reads or compares its operands whole in one call; values share their parts, so a value that cost little to build can be gigabytes read whole: the operands are bounded to " + bytesText(MaxValueBytes)},
	{names: []string{"json.patch"}, verdict: bounded, result: resultSizeBound,
		why: "a copy shares the part it copies, so twenty copies of the whole make a value of a million times its size at no cost: the result, read whole, is bounded to " + bytesText(MaxValueBytes)},
	{names: []string{"object.subset"}, verdict: bounded, bound: same(subsetBound),
		why: "compares every element of one array with every element of the other: their sizes and the product of their lengths are bounded"},
	{names: []string{
		"regex.match", "regex.is_valid", "regex.find_n", "regex.find_all_string_submatch_n", "regex.split",
		"regex.template_match",
	}, verdict: bounded, bound: regexBound,
		why: "RE2 matches in time linear in the text, times the pattern's length: the pattern and that product are bounded"},
	{names: []string{"regex.replace"}, verdict: bounded, bound: same(regexReplaceBound),
		why: "a replacement that repeats the match (`$0`) is expanded in one call: the pattern, and the replacement's length times the text's, are bounded"},
	{names: []string{"units.parse", "units.parse_bytes"}, verdict: bounded, bound: unitsBound,
		why: "a short exponent makes a huge exact number (`1e900000` took 6 s and 6.8 GiB): the text and its exponent are bounded"},

	{names: []string{"glob.match", "regex.globs_match"}, verdict: denied,
		why: "matches by backtracking, exponential in the pattern: `glob.match(\"*a*a*a*a*a*a*c*\", [], <100 a>)` took 13 s and 1.8 GiB, and killed the process; use regex.match"},
	{names: []string{"graph.reachable", "graph.reachable_paths"}, verdict: denied,
		why: "exponential in the graph: every path of a nine-node complete graph takes more than a minute"},
	{names: []string{"strings.render_template"}, verdict: denied,
		why: "Go templates loop (`{{range 100000000}}` took 7.9 s and 2.2 GiB); use sprintf"},
	{names: []string{"net.cidr_expand", "net.cidr_contains_matches"}, verdict: denied,
		why: "the result grows with the address range, or with the product of two collections"},
	{names: []string{"http.send", "net.lookup_ip_addr", "opa.runtime", "providers.aws.sign_req", "json.match_schema", "json.verify_schema"}, verdict: denied,
		why: "reaches the network, the file system or the process (a JSON schema's references are loaded)"},
	{names: []string{"rand.intn", "uuid.rfc4122", "io.jwt.encode_sign", "io.jwt.encode_sign_raw", "io.jwt.decode_verify",
		"crypto.x509.parse_and_verify_certificates", "crypto.x509.parse_and_verify_certificates_with_options"}, verdict: denied,
		why: "differs from call to call (random, or the wall clock): a decision could not be explained or tested"},
	{names: []string{
		"graphql.is_valid", "graphql.parse", "graphql.parse_and_verify", "graphql.parse_query", "graphql.parse_schema",
		"graphql.schema_is_valid", "io.jwt.decode", "io.jwt.verify_eddsa", "io.jwt.verify_es256", "io.jwt.verify_es384",
		"io.jwt.verify_es512", "io.jwt.verify_hs256", "io.jwt.verify_hs384", "io.jwt.verify_hs512", "io.jwt.verify_ps256",
		"io.jwt.verify_ps384", "io.jwt.verify_ps512", "io.jwt.verify_rs256", "io.jwt.verify_rs384", "io.jwt.verify_rs512",
		"crypto.x509.parse_certificate_request", "crypto.x509.parse_certificates", "crypto.x509.parse_keypair",
		"crypto.x509.parse_rsa_private_key", "crypto.parse_private_keys", "rego.parse_module",
	}, verdict: denied,
		why: "parses a format a pod's document does not hold, at a cost that grows faster than the input (schema validation, key sizes)"},
	{names: []string{"internal.test_case", "trace"}, verdict: denied,
		why: "test and trace plumbing of `opa`: print is the sandbox's debug output"},
	{names: []string{"all", "any", "cast_array", "cast_boolean", "cast_null", "cast_object", "cast_set", "cast_string", "re_match", "set_diff", "net.cidr_overlap"}, verdict: denied,
		why: "deprecated: Rego v1 refuses it"},
}

// same is the bound of a group whose built-ins all take check.
func same(check func([]*ast.Term) error) func(string) func([]*ast.Term) error {
	return func(string) func([]*ast.Term) error { return check }
}

// auditOf finds the audit of a built-in.
func auditOf(name string) (audited, bool) {
	for _, a := range audit {
		if slices.Contains(a.names, name) {
			return a, true
		}
	}
	return audited{}, false
}

// permitted says whether rules may call the built-in.
func permitted(name string) bool {
	a, ok := auditOf(name)
	return ok && a.verdict != denied
}

// BuiltinAudit is the sandbox's verdict on a group of built-ins, and why.
type BuiltinAudit struct {
	Names   []string
	Verdict string
	Why     string
}

// Audit is the sandbox's verdict on every built-in of this OPA version
// and Rejuv's own, in groups.
func Audit() []BuiltinAudit {
	out := make([]BuiltinAudit, len(audit))
	for i, a := range audit {
		out[i] = BuiltinAudit{Names: slices.Clone(a.names), Verdict: a.verdict.String(), Why: a.why}
	}
	return out
}
