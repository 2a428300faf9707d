package scale

import (
	"fmt"
	"os"
	"text/tabwriter"
	"time"
)

// The scale issue's targets for the manager, which printTargets sets the
// run's figures beside.
const (
	// targetPerPod is the most resident memory an additional pod may cost
	// each replica.
	targetPerPod = 3 << 10
	// targetLeaderAt10k is the most the leader may hold at 10,000 pods.
	targetLeaderAt10k = 120 << 20
	// targetLeaderAt150k is the most the leader may hold, projected to
	// Kubernetes' largest supported cluster.
	targetLeaderAt150k = 600 << 20
	// targetEngineRatio is how many times OPA's prepared query the
	// engine's sampled pass must be as fast.
	targetEngineRatio = 20
	// failoverBefore is the failover of the code before the compact
	// caches: the median of its four small runs (14.9, 15.7, 17.9 and
	// 19.9 s, commits f766291 and 39af6a6); the failover may be at most
	// 20% longer.
	failoverBefore = 16800 * time.Millisecond
)

// printTargets prints each target beside this run's figure: the resident
// memory a pod costs each replica between the run's two largest sizes (the
// largest and none when it has one size), the leader at 10,000 pods
// (projected along that cost when the run did not go there) and at
// 150,000, the engine's sampled pass at the largest size and the
// failover's longest time; then what the standby's pod cache costs and
// what it saves the failover (measureColdList).
//
// The failover at each size swaps the replicas, so the leader of one
// size's row is not the process that leads at the next. Beside the cost
// of a pod between the rows, the verdict's, it prints each process's own
// from the smaller size's measure after its failover (actionRow.tookOver)
// when the processes are the same: what a pod adds to the heap a process
// keeps, whatever led when. Resident memory is the most the process ever
// held (the runtime returns little of it), so a burst at the takeover
// sets it for the next size too.
func printTargets(rows []memoryRow, acts []actionRow) {
	if len(rows) < 2 {
		return
	}
	a, b := rows[len(rows)-2], rows[len(rows)-1]
	// took is the smaller size's measure after its failover, when its
	// processes are the larger size's.
	var took *memoryRow
	for i := range acts {
		t := &acts[i].tookOver
		if acts[i].pods == a.pods && a.pods > 0 && t.leaderProcess == b.leaderProcess && t.standbyProcess == b.standbyProcess &&
			t.leaderErr == "" && t.standbyErr == "" && b.pods > a.pods {
			took = t
		}
	}
	own := func(role string, pick func(memoryRow) memoryUse) string {
		if took == nil {
			return ""
		}
		n := float64(b.pods - a.pods)
		return fmt.Sprintf("; the %s's own: %.1f KiB resident, %.1f KiB live heap", role, (pick(b).rss-pick(*took).rss)/n/1024, (pick(b).live-pick(*took).live)/n/1024)
	}
	leaderOf := func(r memoryRow) memoryUse { return r.leader }
	standbyOf := func(r memoryRow) memoryUse { return r.standby }
	if a.leaderErr != "" || b.leaderErr != "" || a.standbyErr != "" || b.standbyErr != "" || b.pods == a.pods {
		return
	}
	pods := float64(b.pods - a.pods)
	leaderPerPod, standbyPerPod := (b.leader.rss-a.leader.rss)/pods, (b.standby.rss-a.standby.rss)/pods
	at := func(n int) float64 { return b.leader.rss + leaderPerPod*float64(n-b.pods) }
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Printf("\nthe scale issue's targets, from %d to %d pods\n", a.pods, b.pods)
	fmt.Fprintf(w, "target\tmeasured\tmet\t\n")
	row := func(target, measured string, met bool) {
		fmt.Fprintf(w, "%s\t%s\t%s\t\n", target, measured, map[bool]string{true: "yes", false: "no"}[met])
	}
	kib := func(v float64) string { return fmt.Sprintf("%.1f KiB", v/1024) }
	mib := func(v float64) string { return fmt.Sprintf("%.0f MiB", v/(1<<20)) }
	row(fmt.Sprintf("leader: resident a pod at most %s", kib(targetPerPod)), kib(leaderPerPod)+" (live heap "+kib((b.leader.live-a.leader.live)/pods)+own("leader", leaderOf)+")", leaderPerPod <= targetPerPod)
	row(fmt.Sprintf("standby: resident a pod at most %s", kib(targetPerPod)), kib(standbyPerPod)+" (live heap "+kib((b.standby.live-a.standby.live)/pods)+own("standby", standbyOf)+")", standbyPerPod <= targetPerPod)
	at10k := mib(at(10_000))
	if b.pods != 10_000 {
		at10k += " (projected)"
	}
	row(fmt.Sprintf("leader at 10,000 pods at most %s", mib(targetLeaderAt10k)), at10k, at(10_000) <= targetLeaderAt10k)
	row(fmt.Sprintf("leader at 150,000 pods at most %s", mib(targetLeaderAt150k)), mib(at(150_000))+" (projected)", at(150_000) <= targetLeaderAt150k)
	var last *actionRow
	var failover time.Duration
	for i := range acts {
		if acts[i].pods > 0 {
			last = &acts[i]
			failover = max(failover, acts[i].failover.took)
		}
	}
	if last != nil {
		row(fmt.Sprintf("sampled pass at least %d times the prepared query", targetEngineRatio), fmt.Sprintf("%.1f times at %d pods", last.engine.ratio(), last.pods), last.engine.ratio() >= targetEngineRatio)
		limit := failoverBefore * 12 / 10
		row(fmt.Sprintf("failover at most %s (%s before, +20%%)", limit.Round(100*time.Millisecond), failoverBefore.Round(100*time.Millisecond)), failover.Round(100*time.Millisecond).String()+" (the longest)", failover <= limit)
	}
	_ = w.Flush()
	if last != nil {
		// The standby caches every pod so that it takes over with them
		// read: without, it would list them first.
		fmt.Printf("the standby's pod cache: %s of live heap a pod; without it, a takeover would list the %d pods first: %s more at %d pods (a cold list as a starting cache makes it), the failover %s at least\n",
			kib((b.standby.live-a.standby.live)/pods), last.cold.pods, last.cold.took.Round(10*time.Millisecond), last.pods, (failover + last.cold.took).Round(100*time.Millisecond))
	}
}
