package invariant

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// A runKey is one run of a policy: the policy's UID and the run's
// scheduled time in Unix seconds.
type runKey struct {
	policy types.UID
	at     int64
}

// judgeRun checks a run of pol seen Completed for the first time, after
// Slack.Attribution (a restart may be seen after the status that counts
// it): status.run.recreated must be the number of pods seen to restart for
// the run's requests that succeeded, those deleted since included (the
// manager's count never goes down). A request that failed after its
// container restarted (its pod deleted meanwhile) did not recreate the
// pod as the run counts it.
func (c *Checker) judgeRun(pol *policy, at time.Time) {
	st := pol.obj.Status.Run
	if st == nil || st.State != v1alpha1.RunCompleted {
		return
	}
	key := runKey{policy: pol.uid, at: st.ScheduledTime.Unix()}
	if c.checkedRuns[key] {
		return
	}
	c.checkedRuns[key] = true
	c.tally.runsCompleted++
	run := *st
	c.after(at.Add(c.slack.Attribution), func(time.Time, bool) {
		var pods []string
		for uid, r := range c.recreatedInRun[key] {
			if r.obj.Status.Result == v1beta1.ResultSucceeded {
				pods = append(pods, c.describePod(c.pods[uid])+", recreated by "+r.name)
			}
		}
		if len(pods) == int(run.Recreated) {
			return
		}
		slices.Sort(pods)
		evidence := []string{fmt.Sprintf("run %s seen Completed %s: pods %d, recreated %d, upToDate %d, skipped %d, message %q",
			run.ScheduledTime.UTC().Format(time.RFC3339), c.offset(at), run.Pods, run.Recreated, run.UpToDate, run.Skipped, run.Message)}
		c.violate(RunReports, at, pol.subject(),
			fmt.Sprintf("run %s reports %d pods recreated, %d were seen to restart for its requests",
				run.ScheduledTime.UTC().Format(time.RFC3339), run.Recreated, len(pods)),
			append(evidence, pods...)...)
	})
}
