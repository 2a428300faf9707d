package twins

import (
	"fmt"

	"github.com/rejuv-dev/rejuv/policy"
	"github.com/rejuv-dev/rejuv/rules"
)

// twins are the built-in rules that have a twin in Go, by name.
var twins = map[string]func(params map[string]any) policy.NativeRule{
	"max-age":           newMaxAge,
	"memory-leak":       newMemoryLeak,
	"memory-near-limit": newMemoryNearLimit,
	"restart-storm":     newRestartStorm,
	"stuck-readiness":   newStuckReadiness,
	"stuck-startup":     newStuckStartup,
}

// Of is the built-in rule's twin bound to resolved (its parameters from
// Resolve), nil when it has none.
func Of(r rules.Rule, resolved map[string]any) policy.NativeRule {
	twin, ok := twins[r.Name]
	if !ok {
		return nil
	}
	return twin(resolved)
}

// floatParam is a resolved parameter as a number: resolved parameters are
// float64 or int64 (see Parameter.resolve).
func floatParam(params map[string]any, name string) float64 {
	switch v := params[name].(type) {
	case float64:
		return v
	case int64:
		return float64(v)
	}
	panic(fmt.Sprintf("twins: parameter %s is %T, not a resolved number", name, params[name]))
}
