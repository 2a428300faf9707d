package scale

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	flowcontrolv1 "k8s.io/api/flowcontrol/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/rejuv-dev/rejuv/test/deploy"
)

// The API server counts requests by FlowSchema
// (apiserver_flowcontrol_dispatched_requests_total), not by client. The
// benchmark gives the manager's ServiceAccount FlowSchemas of its own, one
// per kind of request, at the priority level its requests have anyway
// (workload-low, through the built-in service-accounts schema): what the
// API server dispatched through them is what the manager asked for. Writes
// are told apart by what they write; "other writes" (reviews of tokens and
// access, for example) match last.
var requestKinds = []requestKind{
	{name: "watch", verbs: []string{"watch"}},
	{name: "list", verbs: []string{"list"}},
	{name: "get", verbs: []string{"get"}},
	{name: "write-requests", verbs: writeVerbs, group: "apps.kruise.io", resources: []string{"containerrecreaterequests", "containerrecreaterequests/status"}},
	{name: "write-policies", verbs: writeVerbs, group: "rejuv.dev", resources: []string{"recreatepolicies", "recreatepolicies/status"}},
	{name: "write-events", verbs: writeVerbs, group: "events.k8s.io", resources: []string{"events"}},
	{name: "write-leases", verbs: writeVerbs, group: "coordination.k8s.io", resources: []string{"leases"}},
	{name: "write-other", verbs: writeVerbs, last: true},
}

var writeVerbs = []string{"create", "update", "patch", "delete", "deletecollection"}

// requestKind is one FlowSchema: the verbs, and the API group and
// resources (all when empty) it counts.
type requestKind struct {
	name      string
	verbs     []string
	group     string
	resources []string
	// last matches after the others.
	last bool
}

// rule is the kind's resource rule.
func (k requestKind) rule() flowcontrolv1.ResourcePolicyRule {
	r := flowcontrolv1.ResourcePolicyRule{Verbs: k.verbs, APIGroups: []string{"*"}, Resources: []string{"*"}, ClusterScope: true, Namespaces: []string{"*"}}
	if k.group != "" {
		r.APIGroups, r.Resources = []string{k.group}, k.resources
	}
	return r
}

const (
	requestSchemaPrefix = "rejuv-bench-manager-"
	managerAccount      = "rejuv-healer"
	// requestSchemaPrecedence comes before the built-in schemas that
	// would match the manager's account (service-accounts, 9000).
	requestSchemaPrecedence = 500
)

// countManagerRequests creates the FlowSchemas the manager's requests are
// counted by.
func countManagerRequests(ctx context.Context) error {
	for _, k := range requestKinds {
		rule := flowcontrolv1.PolicyRulesWithSubjects{
			Subjects: []flowcontrolv1.Subject{{Kind: flowcontrolv1.SubjectKindServiceAccount,
				ServiceAccount: &flowcontrolv1.ServiceAccountSubject{Namespace: deploy.Namespace, Name: managerAccount}}},
			ResourceRules: []flowcontrolv1.ResourcePolicyRule{k.rule()},
		}
		precedence := int32(requestSchemaPrecedence)
		if k.last {
			precedence++
		}
		fs := &flowcontrolv1.FlowSchema{
			ObjectMeta: metav1.ObjectMeta{Name: requestSchemaPrefix + k.name},
			Spec: flowcontrolv1.FlowSchemaSpec{
				PriorityLevelConfiguration: flowcontrolv1.PriorityLevelConfigurationReference{Name: "workload-low"},
				MatchingPrecedence:         precedence,
				DistinguisherMethod:        &flowcontrolv1.FlowDistinguisherMethod{Type: flowcontrolv1.FlowDistinguisherMethodByUserType},
				Rules:                      []flowcontrolv1.PolicyRulesWithSubjects{rule},
			},
		}
		if _, err := fleet.FlowcontrolV1().FlowSchemas().Create(ctx, fs, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create FlowSchema %s: %w", fs.Name, err)
		}
	}
	return nil
}

// removeRequestCounting deletes the FlowSchemas.
func removeRequestCounting(ctx context.Context) error {
	var errs []error
	for _, k := range requestKinds {
		if err := fleet.FlowcontrolV1().FlowSchemas().Delete(ctx, requestSchemaPrefix+k.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// requestCount is what the API server had dispatched of the manager's
// requests, by kind, at a time; and of everyone's writes, with the CPU
// the API server had used.
type requestCount struct {
	at     time.Time
	byKind map[string]float64
	// writes are all clients' writes; cpu the API server's CPU seconds.
	writes, cpu float64
}

// readRequests reads the API server's counters.
func readRequests(ctx context.Context) (requestCount, error) {
	raw, err := fleet.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return requestCount{}, fmt.Errorf("read the API server's metrics: %w", err)
	}
	c := requestCount{at: time.Now(), byKind: map[string]float64{}, cpu: metricSum(string(raw), "process_cpu_seconds_total")}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "apiserver_request_total{"); ok {
			labels, value, _ := strings.Cut(rest, "} ")
			for _, verb := range []string{"POST", "PUT", "PATCH", "DELETE", "APPLY"} {
				if strings.Contains(labels, `verb="`+verb+`"`) {
					v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
					c.writes += v
				}
			}
			continue
		}
		rest, ok := strings.CutPrefix(line, "apiserver_flowcontrol_dispatched_requests_total{")
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		for _, k := range requestKinds {
			if strings.Contains(labels, `flow_schema="`+requestSchemaPrefix+k.name+`"`) {
				v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
				c.byKind[k.name] += v
			}
		}
	}
	return c, nil
}

// requestRate is the manager's requests a minute between two counts, by
// kind and in all; all clients' writes a second and the API server's CPU,
// in cores.
type requestRate struct {
	byKind               map[string]float64
	total                float64
	allWrites, serverCPU float64
}

func rateBetween(a, b requestCount) requestRate {
	r := requestRate{byKind: map[string]float64{}}
	minutes := b.at.Sub(a.at).Minutes()
	if minutes <= 0 {
		return r
	}
	r.allWrites = (b.writes - a.writes) / (minutes * 60)
	r.serverCPU = (b.cpu - a.cpu) / (minutes * 60)
	for _, k := range requestKinds {
		v := (b.byKind[k.name] - a.byKind[k.name]) / minutes
		r.byKind[k.name] = v
		r.total += v
	}
	return r
}

// String is "T/min (watch W, list L, ...)".
func (r requestRate) String() string {
	parts := make([]string, 0, len(requestKinds))
	for _, k := range requestKinds {
		parts = append(parts, fmt.Sprintf("%s %.0f", k.name, r.byKind[k.name]))
	}
	return fmt.Sprintf("%.0f/min (%s); the API server: %.0f writes/s from all clients, %.2f cores", r.total, strings.Join(parts, ", "), r.allWrites, r.serverCPU)
}
