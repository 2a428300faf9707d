package twins

import (
	"math"
	"math/big"

	"github.com/rejuv-dev/rejuv/policy"
)

// memoryNearLimit is memory-near-limit.rego's twin.
type memoryNearLimit struct {
	// millionths is fraction_millionths: the fraction in millionths.
	millionths int64
	// percent is the fraction as the reasons write it.
	percent string
}

func newMemoryNearLimit(params map[string]any) policy.NativeRule {
	fraction := floatParam(params, "fraction")
	return &memoryNearLimit{millionths: int64(math.Round(fraction * 1e6)), percent: policy.FormatNumberOf(fraction * 100)}
}

func (r *memoryNearLimit) Judge(c *policy.NativeContainer) (string, bool, []string) {
	var noData []string
	if c.Memory == nil {
		noData = append(noData, "memory")
	}
	limit := c.MemoryLimit
	if !c.HasMemoryLimit || limit <= 0 {
		noData = append(noData, "resources.limits.memory")
	}
	if noData != nil {
		return "", false, noData
	}
	ws := c.Memory.WorkingSetBytes
	// ws * 1000000 >= limit * millionths, exactly.
	if new(big.Int).Mul(big.NewInt(ws), big.NewInt(1_000_000)).Cmp(new(big.Int).Mul(big.NewInt(limit), big.NewInt(r.millionths))) < 0 {
		return "", false, nil
	}
	return "working set " + policy.FormatBytesOf(float64(ws)) + " is " + policy.FormatNumberOf(float64(ws)*100/float64(limit)) +
		"% of the " + policy.FormatBytesOf(float64(limit)) + " memory limit (threshold " + r.percent + "%)", true, nil
}
