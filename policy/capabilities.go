package policy

import (
	"slices"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
)

var capabilities = sync.OnceValue(func() *ast.Capabilities {
	c := ast.CapabilitiesForThisVersion()
	c.Builtins = append(slices.DeleteFunc(slices.Clone(c.Builtins), func(b *ast.Builtin) bool { return !permitted(b.Name) }), sandbox().own...)
	c.AllowNet = []string{}
	return c
})

// Capabilities returns the capability set rules are compiled with: the
// built-ins the audit allows (see audit), Rejuv's own among them, and no
// network access.
func Capabilities() *ast.Capabilities {
	return capabilities()
}
