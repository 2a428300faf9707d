package twins

import (
	"math"
	"math/big"
	"math/bits"
	"time"

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

func (r *memoryNearLimit) Judge(c *policy.NativeContainer, _ time.Time) policy.NativeVerdict {
	var v policy.NativeVerdict
	if c.Memory == nil {
		v.NoData = append(v.NoData, "memory")
	}
	limit := c.MemoryLimit
	if !c.HasMemoryLimit || limit <= 0 {
		v.NoData = append(v.NoData, "resources.limits.memory")
	}
	if v.NoData != nil {
		return v
	}
	ws := c.Memory.WorkingSetBytes
	if !atLeast(ws, 1_000_000, limit, r.millionths) {
		return v
	}
	v.Recreate = true
	v.Reason = "working set " + policy.FormatBytesOf(float64(ws)) + " is " + policy.FormatNumberOf(float64(ws)*100/float64(limit)) +
		"% of the " + policy.FormatBytesOf(float64(limit)) + " memory limit (threshold " + r.percent + "%)"
	return v
}

// atLeast reports whether a*b >= c*d, exactly.
func atLeast(a, b, c, d int64) bool {
	if a >= 0 && b >= 0 && c >= 0 && d >= 0 {
		hi1, lo1 := bits.Mul64(uint64(a), uint64(b))
		hi2, lo2 := bits.Mul64(uint64(c), uint64(d))
		return hi1 > hi2 || (hi1 == hi2 && lo1 >= lo2)
	}
	return new(big.Int).Mul(big.NewInt(a), big.NewInt(b)).Cmp(new(big.Int).Mul(big.NewInt(c), big.NewInt(d))) >= 0
}
