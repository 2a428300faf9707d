package twins

import (
	"crypto/md5"
	"encoding/binary"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/rejuv-dev/rejuv/policy"
)

// maxAge is max-age.rego's twin.
type maxAge struct {
	cutoff     *cutoff
	jitter     ast.Number
	maxAgeText string
}

func newMaxAge(params map[string]any) policy.NativeRule {
	age := numberParam(params, "maxAge")
	return &maxAge{cutoff: newCutoff(age), jitter: numberParam(params, "jitter"), maxAgeText: policy.FormatDurationNumber(age)}
}

// hashRange is the modules' 4294967296: a pod hash is below it.
var hashRange = ast.Number("4294967296")

func (r *maxAge) Judge(c *policy.NativeContainer, now time.Time) policy.NativeVerdict {
	var v policy.NativeVerdict
	if c.State != "running" {
		return v
	}
	if c.StartedAt == 0 {
		v.NoData = []string{"startedAt"}
		return v
	}
	due := r.cutoff.at(now)
	if !atOrBefore(c.StartedAt, due) {
		return v
	}
	// The pod's jitter: its share of the jitter parameter, by the first
	// eight hex digits of the MD5 of its UID.
	sum := md5.Sum([]byte(c.PodUID))
	hash := integer(int64(binary.BigEndian.Uint32(sum[:4])))
	jitter := arith("div", arith("mul", r.jitter, hash), hashRange)
	if !atOrBefore(c.StartedAt, arith("minus", due, arith("mul", jitter, nanosPerSecond))) {
		return v
	}
	v.Recreate = true
	v.Reason = "running for " + since(now, c.StartedAt) + " (maxAge " + r.maxAgeText + " + jitter " + policy.FormatDurationNumber(jitter) + " for this pod)"
	return v
}
