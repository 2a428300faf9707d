package bench

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/rejuv-dev/rejuv/api/apps/v1alpha1"
	"github.com/rejuv-dev/rejuv/api/apps/v1beta1"
	"github.com/rejuv-dev/rejuv/test/deploy"
)

// createSamples is the number of samples per path.
const createSamples = 40

// crrResource and crdName name the request's resource in the API server's
// metrics.
const (
	crrResource = "containerrecreaterequests"
	crdName     = "containerrecreaterequests.apps.kruise.io"
	mutateHook  = "mcrr.rejuv.dev"
)

// BenchmarkCreateCall prints where the time of a request's create call
// goes: the client's round trip of a v1beta1 and a v1alpha1 create, of a
// ConfigMap's create (no webhook) and of dry-run creates of both versions,
// sampled interleaved in random order with random gaps, each sample
// bracketed by two scrapes of the API server's and the manager replicas'
// metrics, whose differences give, per path, the calls per create and the
// mean per call of the mutating webhook, of the conversion webhook in each
// direction, of etcd, and of the pod reads and SubjectAccessReviews made
// during the call (none, when the manager's cache has the pod: who may
// create a request is the API server's own check, which its metrics time
// only when it refuses).
//
//	go test -run '^$' -bench BenchmarkCreateCall -benchtime 1x -timeout 20m ./test/bench
func BenchmarkCreateCall(b *testing.B) {
	ns := newNamespace(b)
	// Every real create recreates a container of its own (the kubelet's
	// back-off applies to a container restarted again soon); the dry runs
	// target one container that is never recreated. Two warm-up creates
	// per path come first.
	const warmup = 2
	targets := createPods(b, ns, "create", b.N*2*(createSamples+warmup), 5)
	dry := createPods(b, ns, "dry", 1, 1)[0]
	sc := newMetricsScraper(b)

	b.ResetTimer()
	for range b.N {
		next := 0
		take := func() target { t := targets[next]; next++; return t }
		paths := []*createPath{
			{name: "v1beta1 CRR", version: "v1beta1", resource: crrResource, prepare: func(i int) func() (time.Duration, func()) {
				return createCRR(b, take(), newBetaCRR, fmt.Sprintf("beta-%03d", i), false)
			}},
			{name: "v1alpha1 CRR", version: "v1alpha1", resource: crrResource, prepare: func(i int) func() (time.Duration, func()) {
				return createCRR(b, take(), newAlphaCRR, fmt.Sprintf("alpha-%03d", i), false)
			}},
			{name: "ConfigMap", version: "v1", resource: "configmaps", prepare: func(i int) func() (time.Duration, func()) {
				return createConfigMap(b, ns, fmt.Sprintf("cm-%03d", i))
			}},
			{name: "v1beta1 dry run", version: "v1beta1", resource: crrResource, dryRun: true, prepare: func(i int) func() (time.Duration, func()) {
				return createCRR(b, dry, newBetaCRR, fmt.Sprintf("dry-beta-%03d", i), true)
			}},
			{name: "v1alpha1 dry run", version: "v1alpha1", resource: crrResource, dryRun: true, prepare: func(i int) func() (time.Duration, func()) {
				return createCRR(b, dry, newAlphaCRR, fmt.Sprintf("dry-alpha-%03d", i), true)
			}},
		}
		for _, p := range paths {
			p.delta = metricDelta{}
		}
		for i := range warmup {
			for _, p := range paths {
				_, cleanup := p.prepare(1000 + i)()
				cleanup()
			}
		}
		time.Sleep(time.Second)
		runStart := sc.scrape(b)
		loadStart := loadAverage()
		for i := range createSamples {
			for _, k := range rand.Perm(len(paths)) {
				p := paths[k]
				time.Sleep(100 * time.Millisecond)
				create := p.prepare(i)
				before := sc.scrape(b)
				randomGap()
				d, cleanup := create()
				after := sc.scrape(b)
				p.took = append(p.took, d)
				p.delta.add(after.minus(before))
				cleanup()
			}
		}
		time.Sleep(2 * time.Second)
		// What happened outside the create calls' windows: the whole run
		// less the windows.
		outside := sc.scrape(b).minus(runStart)
		for _, p := range paths {
			outside.add(p.delta.negated())
		}
		printCreateCall(paths, outside, 2*createSamples, loadStart)
		for _, p := range paths[:3] {
			b.ReportMetric(float64(percentile(p.took, 50).Microseconds())/1000, strings.ReplaceAll(p.name, " ", "-")+"-p50-ms")
		}
	}
}

// loadAverage is the host's one-minute load average: the cluster shares
// the host's CPUs with whatever else runs there.
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// createPath is one kind of create call and what it measured.
type createPath struct {
	name string
	// version, resource and dryRun select the create in the API server's
	// request metrics.
	version, resource string
	dryRun            bool
	// prepare readies the i-th create (outside the metrics' window) and
	// returns it; the create returns its round trip and what to do
	// afterwards, outside the measurement.
	prepare func(i int) func() (time.Duration, func())
	took    []time.Duration
	delta   metricDelta
}

func newBetaCRR(t target, name string) client.Object {
	return &v1beta1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.ns, Name: name},
		Spec:       v1beta1.ContainerRecreateRequestSpec{PodName: t.pod, Containers: []v1beta1.ContainerRecreateRequestContainer{{Name: t.container}}},
	}
}

func newAlphaCRR(t target, name string) client.Object {
	return &v1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Namespace: t.ns, Name: name},
		Spec:       v1alpha1.ContainerRecreateRequestSpec{PodName: t.pod, Containers: []v1alpha1.ContainerRecreateRequestContainer{{Name: t.container}}},
	}
}

// createCRR waits, unless it is a dry run, for t's container to run and
// returns the create of a request for it. The create returns its round
// trip and the cleanup, which waits for the request to complete (read as
// v1beta1), deletes it and waits until it is gone, so that no request is
// in flight during the next sample.
func createCRR(b *testing.B, t target, mk func(target, string) client.Object, name string, dryRun bool) func() (time.Duration, func()) {
	b.Helper()
	if !dryRun {
		waitRunning(b, t, "")
	}
	return func() (time.Duration, func()) { return timeCRR(b, t, mk(t, name), dryRun) }
}

func timeCRR(b *testing.B, t target, obj client.Object, dryRun bool) (time.Duration, func()) {
	b.Helper()
	ctx := context.Background()
	name := obj.GetName()
	var opts []client.CreateOption
	if dryRun {
		opts = append(opts, client.DryRunAll)
	}
	start := time.Now()
	if err := stack.Client.Create(ctx, obj, opts...); err != nil {
		b.Fatalf("create %s: %v", name, err)
	}
	took := time.Since(start)
	if dryRun {
		return took, func() {}
	}
	return took, func() {
		key := nsName(t.ns, name)
		err := wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			cur := &v1beta1.ContainerRecreateRequest{}
			if err := stack.Client.Get(ctx, key, cur); err != nil {
				return false, nil
			}
			if cur.Status.Phase != v1beta1.PhaseCompleted {
				return false, nil
			}
			if cur.Status.Result != v1beta1.ResultSucceeded {
				return false, fmt.Errorf("request %s: %s %+v", name, cur.Status.Result, cur.Status.ContainerRecreateStates)
			}
			return true, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		del := &v1beta1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: t.ns, Name: name}}
		if err := stack.Client.Delete(ctx, del); err != nil && !apierrors.IsNotFound(err) {
			b.Fatal(err)
		}
		err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			return apierrors.IsNotFound(stack.Client.Get(ctx, key, &v1beta1.ContainerRecreateRequest{})), nil
		})
		if err != nil {
			b.Fatalf("request %s not gone: %v", name, err)
		}
	}
}

func createConfigMap(b *testing.B, ns, name string) func() (time.Duration, func()) {
	b.Helper()
	return func() (time.Duration, func()) {
		d := plainCreate(b, ns, name)
		return d, func() {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
			if err := stack.Client.Delete(context.Background(), cm); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// metricsScraper reads the API server's metrics with the admin client and
// the manager replicas' metrics as a scraper bound to the metrics reader
// role does; the API server may call either replica.
type metricsScraper struct {
	kube     kubernetes.Interface
	managers []corev1.Pod
}

func newMetricsScraper(b *testing.B) *metricsScraper {
	b.Helper()
	cfg, err := cluster.RESTConfig()
	if err != nil {
		b.Fatal(err)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	managers, err := stack.Pods(context.Background(), deploy.HealerSelector)
	if err != nil {
		b.Fatal(err)
	}
	return &metricsScraper{kube: kube, managers: managers}
}

// The metric families kept from the API server's and the manager's
// metrics (only their _sum and _count), and the resources kept of the
// per-resource families.
var (
	keptFamilies = []string{
		"apiserver_admission_webhook_admission_duration_seconds",
		"apiserver_crd_conversion_webhook_duration_seconds",
		"apiserver_conversion_webhook_duration_seconds",
		"apiserver_request_duration_seconds",
		"apiserver_request_sli_duration_seconds",
		"etcd_request_duration_seconds",
		"controller_runtime_webhook_latency_seconds",
	}
	keptResources = map[string]bool{crrResource: true, "configmaps": true, "pods": true, "subjectaccessreviews": true}
)

func (s *metricsScraper) scrape(b *testing.B) metricSnapshot {
	b.Helper()
	ctx := context.Background()
	raw, err := s.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		b.Fatalf("scrape the API server: %v", err)
	}
	snap := metricSnapshot{}
	snap.parse(string(raw), "")
	for _, m := range s.managers {
		text, err := stack.Metrics(ctx, &m)
		if err != nil {
			b.Fatalf("scrape the manager %s: %v", m.Name, err)
		}
		snap.parse(text, m.Name)
	}
	return snap
}

// metricSeries is one _sum or _count series.
type metricSeries struct {
	name   string
	labels map[string]string
	value  float64
}

// metricSnapshot holds series by their exposition key (the manager pod's
// name prefixed for the manager's).
type metricSnapshot map[string]metricSeries

func (s metricSnapshot) parse(text, source string) {
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, rest, ok := strings.Cut(line, "{")
		if !ok || (!strings.HasSuffix(name, "_sum") && !strings.HasSuffix(name, "_count")) {
			continue
		}
		family := strings.TrimSuffix(strings.TrimSuffix(name, "_sum"), "_count")
		kept := false
		for _, f := range keptFamilies {
			kept = kept || family == f
		}
		if !kept {
			continue
		}
		end := strings.LastIndexByte(rest, '}')
		if end < 0 {
			continue
		}
		labels := parseLabels(rest[:end])
		if r, has := labels["resource"]; has && !keptResources[r] {
			continue
		}
		fields := strings.Fields(rest[end+1:])
		if len(fields) == 0 {
			continue
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			continue
		}
		s[source+"/"+name+"{"+rest[:end]+"}"] = metricSeries{name: name, labels: labels, value: v}
	}
}

// parseLabels parses `a="x",b="y"`.
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	for s != "" {
		k, rest, ok := strings.Cut(s, `="`)
		if !ok {
			break
		}
		var v strings.Builder
		i := 0
		for ; i < len(rest) && rest[i] != '"'; i++ {
			if rest[i] == '\\' && i+1 < len(rest) {
				i++
			}
			v.WriteByte(rest[i])
		}
		out[strings.TrimLeft(k, ",")] = v.String()
		if i+1 > len(rest) {
			break
		}
		s = strings.TrimPrefix(rest[i+1:], ",")
	}
	return out
}

// minus is s - before, series by series.
func (s metricSnapshot) minus(before metricSnapshot) metricDelta {
	d := metricDelta{}
	for k, v := range s {
		d[k] = metricSeries{name: v.name, labels: v.labels, value: v.value - before[k].value}
	}
	for k, v := range before {
		if _, ok := s[k]; !ok {
			d[k] = metricSeries{name: v.name, labels: v.labels, value: -v.value}
		}
	}
	return d
}

// metricDelta is a sum of differences of snapshots.
type metricDelta map[string]metricSeries

func (d metricDelta) add(o metricDelta) {
	for k, v := range o {
		cur, ok := d[k]
		if !ok {
			cur = metricSeries{name: v.name, labels: v.labels}
		}
		cur.value += v.value
		d[k] = cur
	}
}

func (d metricDelta) negated() metricDelta {
	out := metricDelta{}
	for k, v := range d {
		out[k] = metricSeries{name: v.name, labels: v.labels, value: -v.value}
	}
	return out
}

// stat sums family's _sum and _count over the series whose labels
// contain match.
func (d metricDelta) stat(family string, match map[string]string) (sum, count float64) {
	for _, v := range d {
		isSum, isCount := v.name == family+"_sum", v.name == family+"_count"
		if !isSum && !isCount {
			continue
		}
		ok := true
		for k, want := range match {
			ok = ok && v.labels[k] == want
		}
		if !ok {
			continue
		}
		if isSum {
			sum += v.value
		} else {
			count += v.value
		}
	}
	return sum, count
}

// perCall formats the mean per call of family's matching series and the
// calls per create.
func (d metricDelta) perCall(family string, match map[string]string, creates int) (mean, calls string) {
	sum, count := d.stat(family, match)
	calls = fmt.Sprintf("%.2f", count/float64(creates))
	if count < 0.5 {
		return "-", calls
	}
	return ms(time.Duration(sum / count * float64(time.Second))), calls
}

func printCreateCall(paths []*createPath, outside metricDelta, requests int, loadStart string) {
	var out strings.Builder
	fmt.Fprintf(&out, "\nCreate call on the local cluster (%d samples per path, interleaved in random order, random gaps; load average %s at the start, %s at the end)\n",
		createSamples, loadStart, loadAverage())
	row := func(label string, cell func(p *createPath) string) {
		fmt.Fprintf(&out, "  %-44s", label)
		for _, p := range paths {
			fmt.Fprintf(&out, "%17s", cell(p))
		}
		out.WriteString("\n")
	}
	row("", func(p *createPath) string { return p.name })
	row("client round trip p50", func(p *createPath) string { return ms(percentile(p.took, 50)) })
	row("client round trip p95", func(p *createPath) string { return ms(percentile(p.took, 95)) })
	dry := func(p *createPath) string {
		if p.dryRun {
			return "All"
		}
		return ""
	}
	request := func(p *createPath) map[string]string {
		return map[string]string{"verb": "POST", "resource": p.resource, "version": p.version, "dry_run": dry(p)}
	}
	mean := func(family string, match func(p *createPath) map[string]string) func(p *createPath) string {
		return func(p *createPath) string { m, _ := p.delta.perCall(family, match(p), len(p.took)); return m }
	}
	calls := func(family string, match func(p *createPath) map[string]string) func(p *createPath) string {
		return func(p *createPath) string { _, c := p.delta.perCall(family, match(p), len(p.took)); return c }
	}
	fixed := func(m map[string]string) func(*createPath) map[string]string {
		return func(*createPath) map[string]string { return m }
	}
	row("API server: the request (mean)", mean("apiserver_request_duration_seconds", request))
	row("  without admission webhook calls (SLI mean)", mean("apiserver_request_sli_duration_seconds", func(p *createPath) map[string]string {
		m := request(p)
		delete(m, "dry_run")
		return m
	}))
	hook := fixed(map[string]string{"name": mutateHook, "type": "admit", "operation": "CREATE"})
	row("mutating webhook mcrr: calls per create", calls("apiserver_admission_webhook_admission_duration_seconds", hook))
	row("  per call, as the API server sees it", mean("apiserver_admission_webhook_admission_duration_seconds", hook))
	row("  per call, the manager's handler", mean("controller_runtime_webhook_latency_seconds", fixed(map[string]string{"webhook": "/mutate-apps-kruise-io-v1beta1-containerrecreaterequest"})))
	for _, dir := range [][2]string{{"v1alpha1", "v1beta1"}, {"v1beta1", "v1alpha1"}} {
		conv := fixed(map[string]string{"crd_name": crdName, "from_version": dir[0], "to_version": dir[1]})
		row(fmt.Sprintf("conversion %s -> %s: calls per create", dir[0], dir[1]), calls("apiserver_crd_conversion_webhook_duration_seconds", conv))
		row("  per call, as the API server sees it", mean("apiserver_crd_conversion_webhook_duration_seconds", conv))
	}
	convert := fixed(map[string]string{"webhook": "/convert"})
	row("conversion, the manager's handler: calls", calls("controller_runtime_webhook_latency_seconds", convert))
	row("  per call (both directions)", mean("controller_runtime_webhook_latency_seconds", convert))
	for _, op := range []string{"create", "get"} {
		etcd := func(p *createPath) map[string]string {
			return map[string]string{"operation": op, "resource": p.resource}
		}
		row(fmt.Sprintf("etcd %s: calls per create", op), calls("etcd_request_duration_seconds", etcd))
		row("  per call", mean("etcd_request_duration_seconds", etcd))
	}
	podGet := fixed(map[string]string{"verb": "GET", "resource": "pods", "subresource": "", "scope": "resource", "dry_run": ""})
	row("pod GET (any client): calls per create", calls("apiserver_request_duration_seconds", podGet))
	row("  per call, in the API server", mean("apiserver_request_duration_seconds", podGet))
	etcdPod := fixed(map[string]string{"operation": "get", "resource": "pods"})
	row("  etcd get pods: calls per create", calls("etcd_request_duration_seconds", etcdPod))
	row("    per call", mean("etcd_request_duration_seconds", etcdPod))
	sar := fixed(map[string]string{"verb": "POST", "resource": "subjectaccessreviews"})
	row("SubjectAccessReview POST: calls per create", calls("apiserver_request_duration_seconds", sar))
	row("  per call, in the API server", mean("apiserver_request_duration_seconds", sar))

	// Outside the create calls' windows: the requests' lifetimes (the
	// daemon's and the manager's writes, the watch caches' conversions).
	fmt.Fprintf(&out, "\nOutside the create calls, per real request (%d requests, v1beta1 and v1alpha1 alike)\n", requests)
	per := func(label, family string, match map[string]string) {
		sum, count := outside.stat(family, match)
		m := "-"
		if count > 0.5 {
			m = ms(time.Duration(sum / count * float64(time.Second)))
		}
		fmt.Fprintf(&out, "  %-44s%17.2f%17s\n", label, count/float64(requests), m)
	}
	fmt.Fprintf(&out, "  %-44s%17s%17s\n", "", "calls", "mean")
	for _, verb := range []string{"PUT", "PATCH", "APPLY"} {
		for _, sub := range []string{"", "status"} {
			per(fmt.Sprintf("%s %s/%s", verb, crrResource, sub), "apiserver_request_duration_seconds", map[string]string{"verb": verb, "resource": crrResource, "subresource": sub})
		}
	}
	per("validating webhook vcrr (UPDATE)", "apiserver_admission_webhook_admission_duration_seconds", map[string]string{"name": "vcrr.rejuv.dev"})
	for _, dir := range [][2]string{{"v1alpha1", "v1beta1"}, {"v1beta1", "v1alpha1"}} {
		per(fmt.Sprintf("conversion %s -> %s", dir[0], dir[1]), "apiserver_crd_conversion_webhook_duration_seconds", map[string]string{"crd_name": crdName, "from_version": dir[0], "to_version": dir[1]})
	}
	fmt.Print(out.String())
}
