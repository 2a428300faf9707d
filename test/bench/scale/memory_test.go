package scale

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"

	"github.com/rejuv-dev/rejuv/test/deploy"
)

// memoryRow is what the manager costs at one size.
type memoryRow struct {
	pods            int
	leader, standby memoryUse
	daemonRSS       float64
	// restarts of the manager's containers but those the benchmark
	// caused (deliberateRestarts), and the reasons they last ended
	// (OOMKilled when the kernel killed one at its limit; Error after
	// the benchmark's SIGKILL).
	restarts                      int32
	reasons                       []string
	leaderErr, standbyErr, daemon string
	// profiles are the replicas' heap profiles, saved in .cache, and
	// why one could not be taken.
	profiles, profileErrs []string
	// leaderProcess and standbyProcess name the process measured: its
	// pod and how often its container had restarted.
	leaderProcess, standbyProcess string
}

// measureMemory measures both manager replicas and the daemon with the
// fleet at pods; the heap profiles are named after pods.
func measureMemory(ctx context.Context, pods int) (memoryRow, error) {
	return measureMemoryAs(ctx, pods, strconv.Itoa(pods))
}

// measureMemoryAs is measureMemory with the heap profiles named
// heap-ROLE-NAME.pb.gz.
func measureMemoryAs(ctx context.Context, pods int, name string) (memoryRow, error) {
	row := memoryRow{pods: pods}
	leader, err := stack.Leader(ctx)
	if err != nil {
		return row, err
	}
	managers, err := stack.Pods(ctx, deploy.HealerSelector)
	if err != nil {
		return row, err
	}
	for i := range managers {
		p := &managers[i]
		var restarted int32
		for _, cs := range p.Status.ContainerStatuses {
			restarted += cs.RestartCount
			row.restarts += cs.RestartCount
			if t := cs.LastTerminationState.Terminated; t != nil {
				row.reasons = append(row.reasons, t.Reason)
			}
		}
		use, err := scrapeMemory(ctx, p)
		role := "standby"
		if p.Name == leader.Name {
			role = "leader"
		}
		if err == nil {
			if path, err := saveHeapProfile(ctx, p, fmt.Sprintf("heap-%s-%s.pb.gz", role, name)); err != nil {
				row.profileErrs = append(row.profileErrs, fmt.Sprintf("heap profile of the %s: %v", role, err))
			} else {
				row.profiles = append(row.profiles, path)
				// The profile collected the garbage first: what the heap
				// holds now is what is live.
				if text, err := stack.Metrics(ctx, p); err == nil {
					use.live = metricSum(text, "go_memstats_alloc_bytes")
				}
			}
		}
		process := fmt.Sprintf("%s#%d", p.Name, restarted)
		if role == "leader" {
			row.leader, row.leaderProcess = use, process
			if err != nil {
				row.leaderErr = err.Error()
			}
		} else {
			row.standby, row.standbyProcess = use, process
			if err != nil {
				row.standbyErr = err.Error()
			}
		}
	}
	row.restarts = max(0, row.restarts-deliberateRestarts)
	daemon, err := stack.DaemonPod(ctx, cluster.NodeName())
	if err != nil {
		return row, err
	}
	use, err := scrapeMemory(ctx, daemon)
	row.daemonRSS = use.rss
	if err != nil {
		row.daemon = err.Error()
	}
	return row, nil
}

// memoryUse is one process's memory, in bytes.
type memoryUse struct {
	// rss is its resident memory: what the Go runtime holds, and the
	// pages of its executable that were read (shared by the processes of
	// one image on a node, and given back under memory pressure).
	rss float64
	// runtime is what the Go runtime holds (obtained from the system
	// and not released to it): what GOMEMLIMIT bounds.
	runtime float64
	// heap is the Go heap's spans in use.
	heap float64
	// live is the heap's objects just after a garbage collection (the
	// heap profile's): what the process keeps; 0 when not read.
	live float64
}

// scrapeMemory reads a component's memory from its metrics endpoint.
func scrapeMemory(ctx context.Context, pod *corev1.Pod) (memoryUse, error) {
	text, err := stack.Metrics(ctx, pod)
	if err != nil {
		return memoryUse{}, err
	}
	return memoryUse{
		rss:     metricSum(text, "process_resident_memory_bytes"),
		runtime: metricSum(text, "go_memstats_sys_bytes") - metricSum(text, "go_memstats_heap_released_bytes"),
		heap:    metricSum(text, "go_memstats_heap_inuse_bytes"),
	}, nil
}

// metricSum is the sum of a metric's samples, whatever their labels:
// the value of an unlabelled one; 0 when absent.
func metricSum(text, name string) float64 {
	sum := 0.0
	for line := range strings.SplitSeq(text, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if len(fields) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
			sum += v
		}
	}
	return sum
}

func printMemory(rows []memoryRow) {
	mib := func(v float64, failed string) string {
		if failed != "" {
			return "unreachable"
		}
		return fmt.Sprintf("%.0f MiB", v/(1<<20))
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(w, "pods\tnodes\tleader RSS\tleader Go runtime\tleader heap\tstandby RSS\tstandby Go runtime\tstandby heap\tdaemon RSS\tmanager restarts\t\n")
	for _, r := range rows {
		restarts := strconv.Itoa(int(r.restarts))
		if len(r.reasons) > 0 {
			restarts += " (" + strings.Join(r.reasons, ", ") + ")"
		}
		fmt.Fprintf(w, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.pods, sizing.nodes,
			mib(r.leader.rss, r.leaderErr), mib(r.leader.runtime, r.leaderErr), mib(r.leader.heap, r.leaderErr),
			mib(r.standby.rss, r.standbyErr), mib(r.standby.runtime, r.standbyErr), mib(r.standby.heap, r.standbyErr),
			mib(r.daemonRSS, r.daemon), restarts)
	}
	_ = w.Flush()
	for i := 1; i < len(rows); i++ {
		a, b := rows[i-1], rows[i]
		if a.leaderErr != "" || b.leaderErr != "" {
			continue
		}
		per := func(x, y float64) string { return fmt.Sprintf("%.1f KiB", (y-x)/float64(b.pods-a.pods)/1024) }
		fmt.Printf("per pod from %d to %d: leader RSS %s, Go runtime %s, heap %s, live heap %s; standby RSS %s, Go runtime %s, heap %s, live heap %s\n", a.pods, b.pods,
			per(a.leader.rss, b.leader.rss), per(a.leader.runtime, b.leader.runtime), per(a.leader.heap, b.leader.heap), per(a.leader.live, b.leader.live),
			per(a.standby.rss, b.standby.rss), per(a.standby.runtime, b.standby.runtime), per(a.standby.heap, b.standby.heap), per(a.standby.live, b.standby.live))
	}
	for _, r := range rows {
		for _, e := range []string{r.leaderErr, r.standbyErr, r.daemon} {
			if e != "" {
				fmt.Printf("at %d pods: %s\n", r.pods, e)
			}
		}
	}
}
