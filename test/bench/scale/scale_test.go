package scale

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
)

// BenchmarkScale grows the fleet from none (its policies and Deployments,
// no pod) through sizing.pods and prints, at each size: the manager's
// memory (the leader and the standby replica) and the daemon's on the real
// node, how often a manager container was OOM-killed, and the cost of each
// additional pod between sizes (printMemory); the API requests the manager
// made while the fleet settled; then, with pods: what the adversarial
// namespace costs each replica on top (measureAdversarial), the time from a pod's
// readiness change to its request while fleet pods churn, and a rolling
// restart of rollingPods pods against its floor, its largest number of
// pods unavailable at once and the requests the manager made meanwhile,
// and the leader's loss (measureFailover) against a cold list of every pod
// (measureColdList); then the scale issue's targets beside the run's
// figures (printTargets).
// The simulated pods' requests are carried out by the stand-in executor.
func BenchmarkScale(b *testing.B) {
	ctx := context.Background()
	var rows []memoryRow
	var acts []actionRow
	var adversarial []adversarialCost
	for range b.N {
		rows, acts, adversarial = rows[:0], acts[:0], adversarial[:0]
		// First the fleet's namespaces, policies and Deployments with no
		// pod: the manager and the daemon idle, the baseline the sizes
		// are compared with.
		for _, pods := range append([]int{0}, sizing.pods...) {
			start := time.Now()
			if err := scaleFleet(ctx, pods); err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(os.Stderr, "bench: %d pods on %d simulated nodes running after %s; settling %s\n", pods, sizing.nodes, time.Since(start).Round(time.Second), sizing.settle)
			before, err := readRequests(ctx)
			if err != nil {
				b.Fatal(err)
			}
			time.Sleep(sizing.settle)
			after, err := readRequests(ctx)
			if err != nil {
				b.Fatal(err)
			}
			row, err := measureMemory(ctx, pods)
			if err != nil {
				b.Fatal(err)
			}
			rows = append(rows, row)
			fmt.Fprintf(os.Stderr, "bench: at %d pods: leader %.0f MiB resident, %.0f MiB held by the Go runtime, %.0f MiB heap; standby %.0f, %.0f, %.0f MiB; daemon %.0f MiB; %d manager restarts %v; heap profiles %v\n",
				pods, row.leader.rss/(1<<20), row.leader.runtime/(1<<20), row.leader.heap/(1<<20), row.standby.rss/(1<<20), row.standby.runtime/(1<<20), row.standby.heap/(1<<20),
				row.daemonRSS/(1<<20), row.restarts, row.reasons, row.profiles)
			act := actionRow{pods: pods, idle: rateBetween(before, after)}
			fmt.Fprintf(os.Stderr, "bench: at %d pods: the manager's API requests while settling: %s\n", pods, act.idle)
			if pods > 0 {
				cost, err := measureAdversarial(ctx, pods, row)
				if err != nil {
					b.Fatal(err)
				}
				adversarial = append(adversarial, cost)
				fmt.Fprintf(os.Stderr, "bench: at %d pods with %d adversarial pods and requests: leader %.0f MiB resident, %.0f MiB heap; standby %.0f, %.0f MiB; %d manager restarts %v\n",
					pods, cost.pods, cost.with.leader.rss/(1<<20), cost.with.leader.heap/(1<<20), cost.with.standby.rss/(1<<20), cost.with.standby.heap/(1<<20), cost.with.restarts, cost.with.reasons)
				if err := removeNamespaces(ctx, adversarialNamespace); err != nil {
					b.Fatal(err)
				}
				if act.engine, err = measureEngine(ctx); err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(os.Stderr, "bench: at %d pods: the engine's sampled pass over the memory policy %.0f pods/s, %.1f times OPA's prepared query (%.0f pods/s) in the same run\n",
					pods, act.engine.sampled.PerSecond(), act.engine.ratio(), act.engine.prepared.PerSecond())
				if act.reaction, err = measureReaction(ctx, standin); err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(os.Stderr, "bench: at %d pods: reaction p50 %s, p99 %s over %d samples; %d fleet pods deleted meanwhile; %s; the benchmark's writes of a pod's status took %s (p50) and reached its own watch of the pods %s after they started (p50; p99 %s)\n", pods,
					quantile(act.reaction.latencies, 0.5), quantile(act.reaction.latencies, 0.99), len(act.reaction.latencies), act.reaction.churned, act.reaction.parts,
					quantile(act.reaction.writes, 0.5).Round(time.Millisecond), quantile(act.reaction.delivered, 0.5).Round(time.Millisecond), quantile(act.reaction.delivered, 0.99).Round(time.Millisecond))
				if act.rolling, err = measureRolling(ctx, standin, pods); err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(os.Stderr, "bench: at %d pods: rolling restart of %d pods in %s, at most %d pods in recreation at once (maxUnavailable %d), %d not Ready; the leader %.2f cores (%v before and after; CPU profile %s); API requests %s\n", pods,
					act.rolling.pods, act.rolling.took.Round(100*time.Millisecond), act.rolling.mostRecreating, act.rolling.limit, act.rolling.mostNotReady, act.rolling.leaderCores, act.rolling.leaders, act.rolling.profile, act.rolling.requests)
				if act.failover, err = measureFailover(ctx); err != nil {
					b.Fatal(err)
				}
				tookOver := act.failover.tookOver
				if act.failover.restarted {
					tookOver += " (the killed replica, restarted)"
				}
				fmt.Fprintf(os.Stderr, "bench: at %d pods: the leader %s killed, %s held the lease %s later and finished its first policy pass %s later\n",
					pods, act.failover.killed, tookOver, act.failover.leaseTaken.Round(10*time.Millisecond), act.failover.took.Round(10*time.Millisecond))
				if act.cold, err = measureColdList(ctx); err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(os.Stderr, "bench: at %d pods: a cold list of the cluster's %d pods, as a starting cache lists them, took %s\n", pods, act.cold.pods, act.cold.took.Round(10*time.Millisecond))
				if err := removeNamespaces(ctx, reactNamespace, rollingNamespace); err != nil {
					b.Fatal(err)
				}
				// The replicas as they go on to the next size: the cost
				// a pod adds is measured from here, each process against
				// itself in the same role (printTargets).
				if act.tookOver, err = measureMemoryAs(ctx, pods, fmt.Sprintf("%d-after-failover", pods)); err != nil {
					b.Fatal(err)
				}
				passes, err := leaderPasses(ctx)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(os.Stderr, "bench: at %d pods after the failover: leader %.0f MiB resident, %.0f MiB held by the Go runtime, %.0f MiB live heap, %d policy passes since it took over (the reaction's and the rolling restart's namespaces removed meanwhile); standby %.0f, %.0f, %.0f MiB\n",
					pods, act.tookOver.leader.rss/(1<<20), act.tookOver.leader.runtime/(1<<20), act.tookOver.leader.live/(1<<20), passes,
					act.tookOver.standby.rss/(1<<20), act.tookOver.standby.runtime/(1<<20), act.tookOver.standby.live/(1<<20))
			}
			acts = append(acts, act)
		}
	}
	printMemory(rows)
	printAdversarial(adversarial)
	printActions(acts)
	printTargets(rows, acts)
	// A manager that restarted (OOMKilled at its limit) took every webhook
	// whose failure policy is Fail down with it: the figures are those of
	// a manager that does not fit. A figure that could not be read is no
	// figure.
	var problems []string
	for _, r := range rows {
		for _, e := range append([]string{r.leaderErr, r.standbyErr, r.daemon}, r.profileErrs...) {
			if e != "" {
				problems = append(problems, fmt.Sprintf("at %d pods: %s", r.pods, e))
			}
		}
	}
	for _, c := range adversarial {
		for _, e := range append([]string{c.with.leaderErr, c.with.standbyErr, c.with.daemon}, c.with.profileErrs...) {
			if e != "" {
				problems = append(problems, fmt.Sprintf("at %d pods with the adversarial namespace: %s", c.before.pods, e))
			}
		}
	}
	if n := len(adversarial); n > 0 && adversarial[n-1].with.restarts > 0 {
		problems = append(problems, fmt.Sprintf("the manager's containers restarted %d times (%v) by %d pods with the adversarial namespace", adversarial[n-1].with.restarts, adversarial[n-1].with.reasons, adversarial[n-1].before.pods))
	}
	if n := len(rows); n > 0 && rows[n-1].restarts > 0 {
		problems = append(problems, fmt.Sprintf("the manager's containers restarted %d times (%v) by %d pods", rows[n-1].restarts, rows[n-1].reasons, rows[n-1].pods))
	}
	for _, a := range acts {
		for _, e := range append([]string{a.tookOver.leaderErr, a.tookOver.standbyErr, a.tookOver.daemon}, a.tookOver.profileErrs...) {
			if e != "" {
				problems = append(problems, fmt.Sprintf("at %d pods after the failover: %s", a.pods, e))
			}
		}
		if a.rolling.mostRecreating > a.rolling.limit {
			problems = append(problems, fmt.Sprintf("at %d pods: the rolling restart had %d pods in recreation at once, above its maxUnavailable %d", a.pods, a.rolling.mostRecreating, a.rolling.limit))
		}
	}
	if errs := standin.problems(); len(errs) > 0 {
		problems = append(problems, "the stand-in executor: "+strings.Join(errs, "; "))
	}
	if len(problems) > 0 {
		b.Fatal(strings.Join(problems, "; "))
	}
}

// printEngine prints the engine's sampled pass at each size, against the
// same run's prepared query, and the CPU it would take at Kubernetes'
// largest supported cluster at the default sampling interval.
func printEngine(acts []actionRow) {
	const projected, interval = 150_000, 30 * time.Second
	fmt.Printf("\nthe policy engine's sampled pass (every memory window moved one sample), memory-leak and memory-near-limit over the fleet's pods, half leaking; one core, median of %d\n", engineRounds)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "pods\tsampled pods/s\tµs/pod\tprepared query pods/s\tratio\tcores at %d pods every %s\t\n", projected, interval)
	for _, a := range acts {
		if a.pods == 0 {
			continue
		}
		e := a.engine
		fmt.Fprintf(w, "%d\t%.0f\t%.1f\t%.0f\t%.1f\t%.2f\t\n", a.pods, e.sampled.PerSecond(), e.sampled.PerPod().Seconds()*1e6,
			e.prepared.PerSecond(), e.ratio(), e.projectedCores(projected, interval))
	}
	_ = w.Flush()
}

// actionRow is what the manager did at one size.
type actionRow struct {
	pods int
	// idle is the manager's API requests while the fleet settled.
	idle     requestRate
	engine   enginePass
	reaction reaction
	rolling  rolling
	failover failover
	// cold is a list of every pod as a starting cache makes it: what a
	// standby without the pod cache would add to the failover.
	cold coldList
	// tookOver is the manager's memory after the failover: the replica
	// that took over leading, the killed one restarted as the standby.
	tookOver memoryRow
}

// printActions prints the second table: reactions, the rolling restart
// against its floor (the number of batches times the stand-in's median
// restart), and the manager's API requests a minute.
func printActions(acts []actionRow) {
	completed, median, spent := standin.report()
	fmt.Printf("\nstand-in executor (simulated nodes): %d requests completed, each after a restart drawn from %d measured on the real node (median %s, p90 %s); its own reads and writes took %s more a request (median)\n",
		completed, len(restartTimes), quantile(restartTimes, 0.5).Round(time.Millisecond), quantile(restartTimes, 0.9).Round(time.Millisecond), spent.Round(time.Millisecond))
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "pods\treaction p50\treaction p99\trolling restart\tfloor\tratio\twith the stand-in's calls\tratio\tmost in recreation\tmost not Ready\tAPI requests idle\tAPI requests rolling\tfailover (lease taken)\t\n")
	for _, a := range acts {
		if a.pods == 0 {
			fmt.Fprintf(w, "%d\t-\t-\t-\t-\t-\t-\t-\t-\t-\t%.0f/min\t-\t-\t\n", a.pods, a.idle.total)
			continue
		}
		batches := (a.rolling.pods + a.rolling.limit - 1) / a.rolling.limit
		// The floor, and the floor with what the stand-in's own reads and
		// writes took a request on this machine's API server.
		floor := time.Duration(batches) * median
		busy := time.Duration(batches) * (median + spent)
		ratio := func(f time.Duration) float64 {
			if f <= 0 {
				return 0
			}
			return float64(a.rolling.took) / float64(f)
		}
		fmt.Fprintf(w, "%d\t%s\t%s\t%s (%d pods)\t%s\t%.2f\t%s\t%.2f\t%d of %d\t%d\t%.0f/min\t%.0f/min\t%s (%s)\t\n", a.pods,
			quantile(a.reaction.latencies, 0.5).Round(time.Millisecond), quantile(a.reaction.latencies, 0.99).Round(time.Millisecond),
			a.rolling.took.Round(100*time.Millisecond), a.rolling.pods, floor.Round(100*time.Millisecond), ratio(floor), busy.Round(100*time.Millisecond), ratio(busy),
			a.rolling.mostRecreating, a.rolling.limit, a.rolling.mostNotReady, a.idle.total, a.rolling.requests.total, a.failover.took.Round(100*time.Millisecond), a.failover.leaseTaken.Round(100*time.Millisecond))
	}
	_ = w.Flush()
	for _, a := range acts {
		fmt.Printf("API requests at %d pods: idle %s", a.pods, a.idle)
		if a.pods > 0 {
			fmt.Printf("; rolling %s", a.rolling.requests)
		}
		fmt.Println()
	}
	printEngine(acts)
	fmt.Printf("reaction: %d samples a size, from a pod's readiness change to its request, with %d fleet pods deleted a second; floor: batches x the stand-in's median restart (%s), and with its own calls (%s more); failover: from the leader's SIGKILL to the end of the first policy pass of the replica that took the lease, the standby or the killed one restarted (lease taken: to the lease read as another identity's)\n",
		reactSamples, churnPerSecond, median.Round(time.Millisecond), spent.Round(time.Millisecond))
}
