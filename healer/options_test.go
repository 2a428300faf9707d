package healer

import (
	"flag"
	"strings"
	"testing"
)

func parsed(t *testing.T, args ...string) *Options {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o := &Options{}
	o.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		args []string
		want []string // empty: valid
	}{
		{args: nil},
		{args: []string{"--webhook-url=https://127.0.0.1:9443"}},
		{args: []string{"--cert-management=external"}},
		{args: []string{"--cert-management=vault"}, want: []string{`--cert-management: "vault" is not "self" or "external"`}},
		{args: []string{"--webhook-url=http://127.0.0.1:9443"}, want: []string{`--webhook-url: "http://127.0.0.1:9443" must be an https:// URL with a host`}},
		{args: []string{"--webhook-url=https://h:1", "--cert-management=external"}, want: []string{"--webhook-url: needs --cert-management=self"}},
		{args: []string{"--webhook-client-ca=/ca.crt", "--webhook-client-names=apiserver,other"}},
		{args: []string{"--webhook-client-names=apiserver"}, want: []string{"--webhook-client-names: needs --webhook-client-ca"}},
		{args: []string{"--webhook-client-ca=/ca.crt", "--webhook-client-names=apiserver,"}, want: []string{`--webhook-client-names: "apiserver," holds an empty name`}},
		{args: []string{"--crr-executor=openkruise", "--mutating-webhook-configuration="}},
		{args: []string{"--crr-executor=rejuv", "--mutating-webhook-configuration="}, want: []string{"--mutating-webhook-configuration: must not be empty with --cert-management=self"}},
		{args: []string{"--crr-executor=kruise"}, want: []string{`--crr-executor: "kruise" is not "rejuv" or "openkruise"`}},
		{args: []string{"--webhook-port=0", "--pickup-timeout=0s"}, want: []string{"--webhook-port: 0 is not a TCP port", "--pickup-timeout: 0s must be positive"}},
		{args: []string{"--policy-workers=0", "--policy-evaluation-budget=0s"}, want: []string{"--policy-workers: 0 must be at least 1", "--policy-evaluation-budget: 0s must be positive"}},
		{args: []string{"--memory-source=prom"}, want: []string{`--memory-source: "prom" is not "metrics.k8s.io", "prometheus" or "none"`}},
		{args: []string{"--memory-source=prometheus"}, want: []string{"--prometheus-url: must be set with --memory-source=prometheus"}},
		{args: []string{"--prometheus-url=prometheus:9090", "--prometheus-timeout=0s"}, want: []string{`--prometheus-url: "prometheus:9090" is not an http:// or https:// URL with a host`, "--prometheus-timeout: 0s must be positive"}},
		{args: []string{"--memory-sample-interval=500ms"}, want: []string{"--memory-sample-interval: 500ms is below 1s"}},
		{args: []string{"--memory-sample-interval=1m", "--memory-window=90s"}, want: []string{"--memory-window: 1m30s is shorter than two samples (--memory-sample-interval 1m0s)"}},
		{args: []string{"--memory-sample-interval=1s", "--memory-window=48h"}, want: []string{"--memory-window: 48h0m0s holds more than 100000 samples of 1s (4 bytes each per container)"}},
		{args: []string{"--rule-memory-limit=64Mi"}},
		{args: []string{"--rule-memory-limit=0"}, want: []string{"--rule-memory-limit: 0 must be positive"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			err := parsed(t, tt.args...).Validate()
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate() = nil")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %q, lacks %q", err, w)
				}
			}
		})
	}
}

// TestPolicyIsolationDefaults: policies are reconciled by several workers,
// each pass within a budget, unless the flags say otherwise.
func TestPolicyIsolationDefaults(t *testing.T) {
	o := parsed(t)
	if o.MemorySource != "metrics.k8s.io" || o.MemoryInterval.String() != "30s" || o.MemoryWindow.String() != "1h0m0s" {
		t.Errorf("--memory-source %s, --memory-sample-interval %s, --memory-window %s; want metrics.k8s.io, 30s and 1h", o.MemorySource, o.MemoryInterval, o.MemoryWindow)
	}
	if o.PolicyWorkers != 4 || o.PolicyEvaluationBudget.String() != "10s" || o.RuleMemoryLimit.String() != "32Mi" {
		t.Errorf("--policy-workers %d, --policy-evaluation-budget %s, --rule-memory-limit %s; want 4, 10s and 32Mi", o.PolicyWorkers, o.PolicyEvaluationBudget, &o.RuleMemoryLimit)
	}
}

func TestCertHosts(t *testing.T) {
	o := parsed(t, "--namespace=ops", "--webhook-service=hooks")
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.certHosts(), " "); got != "hooks.ops.svc hooks.ops.svc.cluster.local hooks.ops" {
		t.Errorf("in-cluster hosts = %q", got)
	}
	o = parsed(t, "--webhook-url=https://10.213.0.1:19443/base")
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.certHosts(), " "); got != "10.213.0.1" {
		t.Errorf("URL hosts = %q", got)
	}
}
