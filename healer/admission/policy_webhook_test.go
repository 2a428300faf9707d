package admission

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

// createPolicy creates a RecreatePolicy from YAML (its spec), as kubectl
// apply would send it.
func createPolicy(ctx context.Context, c client.Client, ns, name, spec string) error {
	return createFromYAML(ctx, c, v1alpha1.GroupVersion.WithKind("RecreatePolicy"), ns, name, spec)
}

// createFromYAML creates an object of kind gvk whose spec is the YAML
// spec, sent as written, without Rejuv's Go types in between.
func createFromYAML(ctx context.Context, c client.Client, gvk schema.GroupVersionKind, ns, name, spec string) error {
	var s map[string]any
	if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": s}}
	u.SetGroupVersionKind(gvk)
	u.SetNamespace(ns)
	u.SetName(name)
	return c.Create(ctx, u)
}

const leakRule = `
- name: leak
  builtin: memory-leak
  parameters: {minGrowthPerHour: 50Mi, minObservation: 30m}`

func TestPolicyDefaultsAreStored(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	ctx := context.Background()
	if err := createPolicy(ctx, admin, ns, "defaults", "selector: {matchLabels: {app: web}}\nschedule: {cron: \"0 3 * * *\"}\nrules:"+leakRule); err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(v1alpha1.GroupVersion.String())
	u.SetKind("RecreatePolicy")
	if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "defaults"}, u); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(u.Object["spec"])
	for _, want := range []string{
		`"evaluationInterval":"30s"`,
		`"schedule":{"cron":"0 3 * * *","startingDeadlineSeconds":300,"timeZone":"UTC"}`,
		`"recreate":{"activeDeadlineSeconds":600,"ttlSecondsAfterFinished":3600}`,
		`"rollout":{"maxUnavailable":"25%","onFailure":"Halt","respectPodDisruptionBudgets":true}`,
		`"limits":{"cooldown":"30m0s","maxMatchingPercent":50,"memoryRecurrence":"2h0m0s","minMatchingToHalt":2}`,
	} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("stored spec lacks %s:\n%s", want, raw)
		}
	}
	// A client that reads the policy into Rejuv's types and writes it back
	// sends the stored spec unchanged: changing a spec needs delete on pods
	// (the policy-authorization admission policy), a round trip must not.
	typed := &v1alpha1.RecreatePolicy{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "defaults"}, typed); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(typed.Spec)
	var stored, written map[string]any
	_ = json.Unmarshal(raw, &stored)
	_ = json.Unmarshal(again, &written)
	if !reflect.DeepEqual(stored, written) {
		t.Errorf("the spec changes on a round trip through the Go types:\nstored  %s\nwritten %s", raw, again)
	}
}

// TestPolicyWarnsAboutUnmatchedContainersOnlyToTheAPIServer: the suite's
// webhook does not verify its callers (no --webhook-client-ca), so it
// warns of nothing its pods decide; TestAForgedPolicyReviewLearnsNothingOfThePods
// shows the warning a verified caller gets.
func TestPolicyWarnsAboutUnmatchedContainersOnlyToTheAPIServer(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	createPod(t, ns, "web", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "web"} })
	c, warned := warningClient(t)
	if err := createPolicy(context.Background(), c, ns, "warn", "selector: {matchLabels: {app: web}}\nschedule: {cron: \"@daily\"}\ncontainers: [app, \"side*\", db]"); err != nil {
		t.Fatal(err)
	}
	if warnings := warned(); len(warnings) != 0 {
		t.Errorf("warnings = %q from a webhook that does not verify its callers, want none", warnings)
	}
}

func TestPolicyWarnsAboutAScheduleFasterThanTheBackOff(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c, warned := warningClient(t)
	if err := createPolicy(context.Background(), c, ns, "hourly", "selector: {matchLabels: {app: web}}\nschedule: {cron: \"@hourly\"}"); err != nil {
		t.Fatal(err)
	}
	if warnings := warned(); len(warnings) != 0 {
		t.Errorf("an hourly schedule: warnings %q, want none", warnings)
	}
	if err := createPolicy(context.Background(), c, ns, "often", "selector: {matchLabels: {app: web}}\nschedule: {cron: \"*/5 * * * *\"}"); err != nil {
		t.Fatal(err)
	}
	want := `spec.schedule.cron "*/5 * * * *": runs come as little as 5m0s apart; a container restarted again within 10m0s waits for the kubelet's restart back-off`
	if warnings := warned(); len(warnings) != 1 || !strings.HasPrefix(warnings[0], want) {
		t.Errorf("a schedule every 5 minutes: warnings %q, want one starting %q", warnings, want)
	}
}

// TestPolicyWarnsAboutSignals: signals are accepted with a warning when
// the manager has no Prometheus (the suite's has none), and one for each
// signal no rule names.
func TestPolicyWarnsAboutSignals(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c, warned := warningClient(t)
	spec := "selector: {matchLabels: {app: web}}\nsignals: [{name: queue, query: up}, {name: spare, query: up}]\n" +
		"rules: [{name: q, rego: \"package q\\nimport rego.v1\\nrecreate contains c.name if { some c in input.containers; input.signals.queue > 1 }\"}]"
	if err := createPolicy(context.Background(), c, ns, "signals", spec); err != nil {
		t.Fatal(err)
	}
	warnings := warned()
	want := []string{"spec.signals: the manager has no Prometheus (--prometheus-url)", "spec.signals[1]: no rule names signal spare"}
	if len(warnings) != len(want) {
		t.Fatalf("warnings = %q, want %d", warnings, len(want))
	}
	for i, w := range want {
		if !strings.HasPrefix(warnings[i], w) {
			t.Errorf("warning %d = %q, want it to start with %q", i, warnings[i], w)
		}
	}
}

// TestPolicyWarnsAboutAnEmptySelector: a policy whose selector is empty,
// which selects every pod of its namespace, is accepted with a warning
// that says so.
func TestPolicyWarnsAboutAnEmptySelector(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c, warned := warningClient(t)
	if err := createPolicy(context.Background(), c, ns, "everything", "selector: {}\nschedule: {cron: \"@daily\"}"); err != nil {
		t.Fatal(err)
	}
	want := "spec.selector: an empty selector selects every pod of namespace " + ns
	if warnings := warned(); len(warnings) != 1 || !strings.Contains(warnings[0], want) {
		t.Errorf("warnings = %q, want one containing %q", warnings, want)
	}
}

// TestPolicyWarnsAboutASelectorOfAbsentLabels: a selector that only
// excludes (NotIn, DoesNotExist) selects every other pod of the namespace,
// those of workloads created later too: admitted, with a warning.
func TestPolicyWarnsAboutASelectorOfAbsentLabels(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	c, warned := warningClient(t)
	spec := "selector: {matchExpressions: [{key: tier, operator: NotIn, values: [db]}, {key: rejuv.dev/skip, operator: DoesNotExist}]}\nschedule: {cron: \"@daily\"}"
	if err := createPolicy(context.Background(), c, ns, "all-but-db", spec); err != nil {
		t.Fatal(err)
	}
	want := "spec.selector: with only NotIn and DoesNotExist requirements it selects every pod of namespace " + ns + " that lacks those labels"
	if warnings := warned(); len(warnings) != 1 || !strings.Contains(warnings[0], want) {
		t.Errorf("warnings = %q, want one containing %q", warnings, want)
	}
	// One requirement that a label be there is enough.
	c, warned = warningClient(t)
	spec = "selector: {matchLabels: {app: web}, matchExpressions: [{key: tier, operator: NotIn, values: [db]}]}\nschedule: {cron: \"@daily\"}"
	if err := createPolicy(context.Background(), c, ns, "web-but-db", spec); err != nil {
		t.Fatal(err)
	}
	if warnings := warned(); len(warnings) != 0 {
		t.Errorf("warnings = %q for a selector with matchLabels, want none", warnings)
	}
}

// warningClient is a client that collects the API server's warnings.
func warningClient(t *testing.T) (client.Client, func() []string) {
	t.Helper()
	var (
		mu       sync.Mutex
		warnings []string
	)
	cfg := rest.CopyConfig(restCfg)
	cfg.WarningHandlerWithContext = warningFunc(func(msg string) {
		mu.Lock()
		warnings = append(warnings, msg)
		mu.Unlock()
	})
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	return c, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(warnings)
	}
}

type warningFunc func(string)

func (f warningFunc) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, msg string) {
	f(msg)
}

func TestPolicyTableAndShortName(t *testing.T) {
	needsAPIServer(t)
	ns := newNamespace(t)
	ctx := context.Background()
	if err := createPolicy(ctx, admin, ns, "web", "selector: {}\nschedule: {cron: \"@daily\"}"); err != nil {
		t.Fatal(err)
	}
	p := &v1alpha1.RecreatePolicy{}
	if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: "web"}, p); err != nil {
		t.Fatal(err)
	}
	next := metav1.NewTime(p.CreationTimestamp.Add(24 * 3600e9))
	p.Status = v1alpha1.RecreatePolicyStatus{
		ObservedGeneration: p.Generation,
		Conditions:         []metav1.Condition{{Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonActive, LastTransitionTime: metav1.Now()}},
		SelectedPods:       6, ActiveRecreations: 2, NextScheduleTime: &next,
		RecentDecisions: []v1alpha1.Decision{
			{Time: metav1.Now(), Pod: "web-2", Trigger: "schedule", Outcome: v1alpha1.OutcomeUnavailable, Reason: "scheduled run"},
			{Time: metav1.Now(), Pod: "web-1", Trigger: "schedule", Outcome: v1alpha1.OutcomeCreated, Reason: "scheduled run"},
		},
	}
	if err := admin.Status().Update(ctx, p); err != nil {
		t.Fatal(err)
	}
	cols, cells := getTableOf(t, "/apis/rejuv.dev/v1alpha1/namespaces/"+ns+"/recreatepolicies")
	if got, want := strings.Join(cols, " "), "Name Ready Selected Active Last Last-Pod Last-Reason Run Next-Run Age"; got != want {
		t.Errorf("columns = %q, want %q", got, want)
	}
	if cells[1] != "True" || cells[2] != float64(6) || cells[3] != float64(2) || cells[4] != "Unavailable" || cells[5] != "web-2" {
		t.Errorf("row = %v, want Ready True, 6 selected, 2 active, last Unavailable on web-2", cells)
	}
	// The next run is in the future: shown as the time, not as a time
	// since (which kubectl prints as <invalid>).
	if want := next.UTC().Format(time.RFC3339); cells[8] != want {
		t.Errorf("Next-Run = %v, want %s", cells[8], want)
	}

	dc, err := discovery.NewDiscoveryClientForConfig(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	list, err := dc.ServerResourcesForGroupVersion("rejuv.dev/v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list.APIResources {
		if r.Name == "recreatepolicies" {
			if strings.Join(r.ShortNames, ",") != "rp" || !r.Namespaced || strings.Join(r.Categories, ",") != "rejuv" {
				t.Errorf("recreatepolicies: shortNames %v namespaced %v categories %v", r.ShortNames, r.Namespaced, r.Categories)
			}
			return
		}
	}
	t.Error("rejuv.dev/v1alpha1 does not serve recreatepolicies")
}

// TestPolicyExplain reads the published schema kubectl explain rp.spec.rules
// prints.
func TestPolicyExplain(t *testing.T) {
	needsAPIServer(t)
	var schema node
	if err := json.Unmarshal(publishedSchema(t, "rejuv.dev/v1alpha1", "dev.rejuv.v1alpha1.RecreatePolicy"), &schema); err != nil {
		t.Fatal(err)
	}
	spec := schema.Properties["spec"]
	if len(spec.Properties) != 13 {
		t.Fatalf("spec has %d fields in the published schema", len(spec.Properties))
	}
	var walk func(path string, n node)
	walk = func(path string, n node) {
		if n.Description == "" {
			t.Errorf("%s has no description", path)
		}
		for name, child := range n.Properties {
			walk(path+"."+name, child)
		}
		if n.Items != nil {
			for name, child := range n.Items.Properties {
				walk(path+"."+name, child)
			}
		}
	}
	for _, name := range []string{"containers", "schedule", "rules", "evaluationInterval", "recreate", "rollout", "limits", "windows", "dryRun", "suspend"} {
		walk("spec."+name, spec.Properties[name])
	}
	rules := spec.Properties["rules"].Items
	if rules == nil || !strings.Contains(rules.Description, "Exactly one of builtin and rego") || !strings.Contains(rules.Properties["builtin"].Description, "memory-leak") {
		t.Errorf("spec.rules is not explained: %+v", rules)
	}
}

type node struct {
	Description string          `json:"description"`
	Properties  map[string]node `json:"properties"`
	Items       *node           `json:"items"`
}
