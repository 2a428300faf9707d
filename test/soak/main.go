package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/deploy"
	"github.com/rejuv-dev/rejuv/test/images"
	"github.com/rejuv-dev/rejuv/test/soak/invariant"
)

func main() {
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code, err := run(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "soak: %v\n", err)
		if code == 0 {
			code = 2
		}
	}
	os.Exit(code)
}

// faultGap is the mean time between two faults' starts: about 240 an
// hour (some cannot be injected when they come up: a replica on a lost
// node), several under way at once.
const faultGap = 15 * time.Second

// settleLimit bounds how long the cluster may take, once the faults and
// the load have stopped, until every request has ended and every pod is
// Ready.
const settleLimit = 4 * time.Minute

// run is a soak: 1 when it found a violation, 2 when it could not run.
func run(ctx context.Context) (int, error) {
	root, err := harness.RepoRoot()
	if err != nil {
		return 2, err
	}
	o, err := readOptions(root, time.Now())
	if err != nil {
		return 2, err
	}
	fmt.Printf("soak: seed %d (SOAK_SEED=%d replays its choices), %s of load and faults; evidence in %s\n", o.seed, o.seed, o.duration, o.evidence)
	if err := os.MkdirAll(o.evidence, 0o755); err != nil {
		return 2, err
	}
	rec, err := newRecorder(o.evidence)
	if err != nil {
		return 2, err
	}
	defer rec.close()

	cluster, release, err := harness.Shared(ctx)
	if err != nil {
		return 2, fmt.Errorf("start the cluster: %w", err)
	}
	defer release()
	if len(cluster.Nodes()) < 2 {
		return 2, fmt.Errorf("the cluster runs %d node; the soak loses one of two (REJUV_NODES=2)", len(cluster.Nodes()))
	}
	if _, err := cluster.BuildImage(ctx, images.TestApp); err != nil {
		return 2, err
	}
	stack, err := deploy.Install(ctx, cluster, deploy.Options{Keep: true})
	if err != nil {
		return 2, fmt.Errorf("install Rejuv: %w", err)
	}
	// Built where the run's evidence is not: it is 100 MB.
	bin, err := os.MkdirTemp("", "soak-plugin-")
	if err != nil {
		return 2, err
	}
	defer os.RemoveAll(bin)
	plugin := filepath.Join(bin, "kubectl-rejuv")
	build := exec.CommandContext(ctx, "go", "build", "-o", plugin, "./cmd/kubectl-rejuv")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return 2, fmt.Errorf("build kubectl-rejuv: %w\n%s", err, out)
	}
	if err := removeEarlier(ctx, stack.Client); err != nil {
		return 2, err
	}
	watcher, err := deploy.WatchClient(cluster)
	if err != nil {
		return 2, err
	}

	// Everything seen goes to the checker, in the order seen.
	seen := make(chan invariant.Observation, 4096)
	checker := invariant.NewChecker(invariant.DefaultSlack(), trafficFaults)
	// finish tells the checker to take what is waiting and stop; the
	// channel itself is never closed, since the informers' handlers may
	// still be handing an event over when they are stopped.
	finish, checked := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(checked)
		observe := func(obs invariant.Observation) {
			rec.observed(obs)
			checker.Observe(obs)
		}
		for {
			select {
			case obs := <-seen:
				observe(obs)
			case <-finish:
				for {
					select {
					case obs := <-seen:
						observe(obs)
					default:
						return
					}
				}
			}
		}
	}()
	var sending sync.WaitGroup
	send := func(obs invariant.Observation) {
		sending.Go(func() { seen <- obs })
	}
	watchCtx, stopWatching := context.WithCancel(context.WithoutCancel(ctx))
	panics := &panicScanner{stack: stack, send: send, log: rec.logf}
	obs := &observer{kube: stack.Kube, watch: watcher, sink: seen, restarted: panics.restarted}
	if err := obs.start(watchCtx); err != nil {
		stopWatching()
		return 2, err
	}

	urls := map[string]string{}
	for _, a := range fleet() {
		url, err := a.create(ctx, stack.Client)
		if err != nil {
			stopWatching()
			return 2, err
		}
		if url != "" {
			urls[a.namespace+"/"+a.name] = url
		}
	}
	rec.logf("the fleet is Ready: %d apps, %d served", len(fleet()), len(urls))

	r := rand.New(rand.NewPCG(uint64(o.seed), 0))
	cl, err := startClients(urls, o.duration+settleLimit+time.Minute)
	if err != nil {
		stopWatching()
		return 2, err
	}
	started := time.Now()
	deadline := started.Add(o.duration)
	f := &faulter{cluster: cluster, stack: stack, sink: seen, log: rec.logf, held: map[string]bool{}, failed: map[invariant.Fault]int{}}
	l := &load{client: stack.Client, kube: stack.Kube, plugin: plugin, kubeconfig: cluster.Kubeconfig(), log: rec.logf, counts: map[string]int{}}
	var busy sync.WaitGroup
	faultSeed, loadSeed := r.Uint64(), r.Uint64()
	busy.Go(func() { f.run(ctx, rand.New(rand.NewPCG(faultSeed, 2)), faultGap, deadline) })
	busy.Go(func() { l.run(ctx, rand.New(rand.NewPCG(loadSeed, 3)), deadline) })
	busy.Wait()
	removeWebhookRules(f)
	rec.logf("faults and load stopped after %s; settling", time.Since(started).Round(time.Second))

	settled := settle(context.WithoutCancel(ctx), stack.Client, settleLimit)
	rec.logf("settled: %v", settled)
	totals := cl.stop()
	// The clients' failures, in the order they were sent: the checker
	// groups those of one Service close in time.
	slices.SortFunc(totals.failures, func(a, b invariant.ClientFailed) int { return a.At.Compare(b.At) })
	for _, failure := range totals.failures {
		seen <- failure
	}
	panics.scanAll(context.WithoutCancel(ctx))
	sending.Wait()
	stopWatching()
	close(finish)
	<-checked
	report := checker.Finish(time.Now())
	s := summary{seed: o.seed, duration: o.duration, ran: time.Since(started), report: report, clients: totals, load: l.counts, notInjected: f.failed, settled: settled, evidence: o.evidence}
	if err := s.write(os.Stdout, rec); err != nil {
		return 2, err
	}
	if len(report.Violations) > 0 || settled != nil {
		if err := dumpObjects(context.WithoutCancel(ctx), stack.Client, o.evidence); err != nil {
			rec.logf("write the objects: %v", err)
		}
	}
	if err := cleanUp(context.WithoutCancel(ctx), stack.Client); err != nil {
		rec.logf("clean up: %v", err)
	}
	if len(report.Violations) > 0 || settled != nil {
		return 1, nil
	}
	return 0, nil
}

// trafficFaults are the faults that a Service's clients may notice
// whatever Rejuv does: a lost node's pods answer no more until the node
// controller takes them out of their Services; a node whose kubelet is
// paused past the node grace has its pods taken out of their Services
// by the node controller, all at once, whatever Rejuv has taken
// elsewhere (seed 9: two pods of four on the paused node, two on the
// other being recreated, one by a request by hand, and no endpoint left
// for 0.4 s); an API server restart leaves the EndpointSlice controller
// and kube-proxy behind the pods' readiness until their watches are back
// (seed 13's hour, +2251.6 s: a pod made not ready 14 s after the restart
// ended still got new connections when its unready grace was over and its
// container stopped, 49 refused over 10.7 s).
var trafficFaults = []invariant.Fault{invariant.LoseNode, invariant.PauseKubelet, invariant.RestartAPIServer}

// cleanUp removes the soak's namespaces, without waiting.
func cleanUp(ctx context.Context, c client.Client) error {
	for _, a := range fleet() {
		if err := c.Delete(ctx, &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: a.namespace}}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
