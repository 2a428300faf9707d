package policy

import (
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

// deniedBuiltins are kept from rules: they reach the network, the file
// system or the process (http.send, net.*, opa.runtime, and the JSON schema
// checks, which load what a schema refers to), or give a different answer
// for the same input (rand.intn, uuid.rfc4122), which would make decisions
// impossible to explain or test.
var deniedBuiltins = []string{"http.send", "net.", "opa.runtime", "json.match_schema", "json.verify_schema", "rand.intn", "uuid.rfc4122"}

var capabilities = sync.OnceValue(func() *ast.Capabilities {
	c := ast.CapabilitiesForThisVersion()
	c.Builtins = slices.DeleteFunc(slices.Clone(c.Builtins), func(b *ast.Builtin) bool { return denied(b.Name) })
	c.AllowNet = []string{}
	return c
})

func denied(name string) bool {
	for _, d := range deniedBuiltins {
		if name == d || strings.HasSuffix(d, ".") && strings.HasPrefix(name, d) {
			return true
		}
	}
	return false
}

// Capabilities returns the capability set rules are compiled with: this
// OPA version's built-ins without the denied ones, and no network access.
func Capabilities() *ast.Capabilities {
	return capabilities()
}

// DeniedBuiltins lists the built-ins, or prefixes ending in ".", that rules
// may not call.
func DeniedBuiltins() []string {
	return slices.Clone(deniedBuiltins)
}
