package policy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr/funcr"

	"github.com/rejuv-dev/rejuv/policy/policytest"
)

func program(t *testing.T, o Options, rules ...Rule) *Program {
	t.Helper()
	p, err := NewEngine(o).Program(context.Background(), Ref{Namespace: "shop", Name: "web", Generation: 1}, rules)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func target(now time.Time, containers ...string) Target {
	t := Target{Pod: policytest.Pod(3, now)}
	for _, c := range containers {
		t.Containers = append(t.Containers, ContainerCandidate{Name: c})
	}
	return t
}

func TestDeadlineStopsEndlessRule(t *testing.T) {
	p := program(t, Options{Deadline: 200 * time.Millisecond}, Rule{Name: "endless", Module: policytest.Endless}, Rule{Name: "custom", Module: notReadyRule})
	start := time.Now()
	res, err := p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	var ee *EvalError
	if !errors.As(res[0].Err, &ee) || !errors.Is(res[0].Err, ErrDeadline) || ee.Rule != "endless" || ee.Policy != "shop/web" {
		t.Fatalf("endless rule: got %v, want a deadline error naming policy shop/web and rule endless", res[0].Err)
	}
	if took > 2*time.Second {
		t.Errorf("evaluation took %s with a 200ms deadline", took)
	}
	if res[1].Err != nil {
		t.Errorf("the other rule failed too: %v", res[1].Err)
	}
	// The program stays usable after a stopped evaluation.
	res, err = p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	if err != nil || res[1].Err != nil {
		t.Errorf("next evaluation: %v %v", err, res[1].Err)
	}
}

func TestClockIsInjected(t *testing.T) {
	now := time.Date(2031, 3, 30, 1, 2, 3, 456789000, time.UTC)
	rule := `package clock
import rego.v1
recreate contains {"container": c.name, "reason": sprintf("%s %d", [input.now, time.now_ns()])} if {
	some c in input.containers
	time.now_ns() == time.parse_rfc3339_ns(input.now)
}
`
	p := program(t, Options{}, Rule{Name: "clock", Module: rule})
	res, err := p.Evaluate(context.Background(), target(now, "app"), now)
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	want := fmt.Sprintf("2031-03-30T01:02:03.456789Z %d", now.UnixNano())
	if len(res[0].Matches) != 1 || res[0].Matches[0].Reason != want {
		t.Errorf("got %+v, want reason %q", res[0].Matches, want)
	}
}

func TestInputDocument(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rule := `package doc
import rego.v1
recreate contains {"container": c.name, "reason": json.marshal(c)} if {
	some c in input.containers
	input.pod.metadata.name == "web-00003"
	input.policy == {"name": "web", "namespace": "shop"}
	input.parameters == {"limit": 3}
	input.signals == {"queue": 1.5}
}
`
	p := program(t, Options{}, Rule{Name: "doc", Module: rule, Parameters: map[string]any{"limit": 3}})
	tg := target(now)
	tg.Signals = map[string]float64{"queue": 1.5}
	tg.Containers = []ContainerCandidate{
		{Name: "app", NotReadySince: now.Add(-time.Minute), Recreations: 2, LastRecreation: now.Add(-time.Hour),
			Memory: &MemoryWindow{WorkingSetBytes: 300 << 20, Samples: 12, WindowSeconds: 600, SlopeBytesPerSecond: 1024, R2: 0.9,
				StartSlopeBytesPerSecond: 1000, EndSlopeBytesPerSecond: 1100, LatestSlopeBytesPerSecond: 1050},
			Signals: map[string]float64{"gcPause": 0.25}},
		{Name: "proxy"},
	}
	res, err := p.Evaluate(context.Background(), tg, now)
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	got := map[string]string{}
	for _, m := range res[0].Matches {
		got[m.Container] = m.Reason
	}
	for container, want := range map[string][]string{
		"app": {`"kind":"container"`, `"ready":true`, `"state":"running"`, `"startedAt":"2026-11-21T08:00:00Z"`, `"restartCount":0`,
			`"notReadySince":"2026-11-21T11:59:00Z"`, `"limits":{"memory":536870912}`, `"requests":{"cpu":250,"memory":268435456}`,
			`"memory":{"endSlopeBytesPerSecond":1100,"latestSlopeBytesPerSecond":1050,"r2":0.9,"samples":12,"slopeBytesPerSecond":1024,"startSlopeBytesPerSecond":1000,"windowSeconds":600,"workingSetBytes":314572800}`,
			`"recreations":{"last":"2026-11-21T11:00:00Z","total":2}`, `"lastTermination":null`, `"started":true`, `"signals":{"gcPause":0.25}`},
		"proxy": {`"kind":"sidecar"`, `"ready":true`, `"memory":null`, `"notReadySince":null`, `"recreations":{"last":null,"total":0}`, `"signals":{}`},
	} {
		for _, w := range want {
			if !strings.Contains(got[container], w) {
				t.Errorf("input.containers entry of %s lacks %s:\n%s", container, w, got[container])
			}
		}
	}
}

func TestResultValidation(t *testing.T) {
	cases := map[string]struct {
		body    string
		want    []Match
		wantErr string
	}{
		"objects":           {`recreate contains {"container": "app", "reason": "r"} if true`, []Match{{"app", "r", false}}, ""},
		"bare name":         {`recreate contains "app" if true`, []Match{{"app", "", false}}, ""},
		"two reasons":       {"recreate contains {\"container\": \"app\", \"reason\": \"a\"} if true\nrecreate contains {\"container\": \"app\", \"reason\": \"b\"} if true", []Match{{"app", "a; b", false}}, ""},
		"forced once":       {"recreate contains {\"container\": \"app\", \"reason\": \"a\", \"force\": true} if true\nrecreate contains {\"container\": \"app\", \"reason\": \"b\"} if true", []Match{{"app", "a; b", true}}, ""},
		"force not boolean": {`recreate contains {"container": "app", "force": "yes"} if true`, nil, `"force" must be a boolean`},
		"nothing":           {`recreate contains "app" if false`, nil, ""},
		"unknown container": {`recreate contains "db" if true`, nil, `container "db", which is not a candidate (candidates: app, proxy)`},
		"number":            {`recreate contains 3 if true`, nil, "want a container name"},
		"no container key":  {`recreate contains {"name": "app"} if true`, nil, `needs a non-empty string "container"`},
		"extra key":         {`recreate contains {"container": "app", "why": 1} if true`, nil, `unknown key "why"`},
		"reason not string": {`recreate contains {"container": "app", "reason": 1} if true`, nil, `"reason" must be a string`},
		"not a set":         {`recreate := input.pod.metadata.name`, nil, "must be a set"},
		"undefined":         {`recreate := x if { x := input.pod.metadata.name; false }`, nil, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := program(t, Options{}, Rule{Name: "r", Module: "package x\nimport rego.v1\n" + tc.body + "\n"})
			res, err := p.Evaluate(context.Background(), target(time.Now(), "app", "proxy"), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" {
				if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), tc.wantErr) {
					t.Errorf("got %v (matches %v), want error containing %q", res[0].Err, res[0].Matches, tc.wantErr)
				}
				return
			}
			if res[0].Err != nil {
				t.Fatal(res[0].Err)
			}
			if len(res[0].Matches) != len(tc.want) || len(tc.want) > 0 && res[0].Matches[0] != tc.want[0] {
				t.Errorf("got %+v, want %+v", res[0].Matches, tc.want)
			}
		})
	}
}

func TestNoData(t *testing.T) {
	rule := `package x
import rego.v1
recreate contains c.name if {
	some c in input.containers
	c.memory.workingSetBytes > 0
}
no_data contains {"container": c.name, "signal": "memory"} if {
	some c in input.containers
	c.memory == null
}
`
	p := program(t, Options{}, Rule{Name: "mem", Module: rule})
	res, err := p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now())
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	if len(res[0].Matches) != 0 || len(res[0].NoData) != 1 || res[0].NoData[0] != (NoData{"app", "memory"}) {
		t.Errorf("got matches %v no data %v, want no match and no data for app's memory", res[0].Matches, res[0].NoData)
	}
}

func TestPrintGoesToDebugLog(t *testing.T) {
	var lines []string
	log := funcr.New(func(_, args string) { lines = append(lines, args) }, funcr.Options{Verbosity: 1})
	rule := "package x\nimport rego.v1\nrecreate contains c.name if {\n\tsome c in input.containers\n\tprint(\"looking at\", c.name)\n\tfalse\n}\n"
	p := program(t, Options{Log: log}, Rule{Name: "chatty", Module: rule})
	if _, err := p.Evaluate(context.Background(), target(time.Now(), "app"), time.Now()); err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || !strings.Contains(lines[0], `"message"="looking at app"`) || !strings.Contains(lines[0], `"rule"="chatty"`) || !strings.Contains(lines[0], `"line"=5`) {
		t.Errorf("debug log: %q", lines)
	}
}

// A container's signals are part of its entry: a new value is seen at
// the next evaluation of the same pod.
func TestContainerSignalsChange(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rule := `package sig
import rego.v1
recreate contains {"container": c.name, "reason": sprintf("%v", [c.signals.gcPause])} if {
	some c in input.containers
	c.signals.gcPause > 0.1
}
`
	p := program(t, Options{}, Rule{Name: "sig", Module: rule})
	tg := target(now)
	for _, v := range []float64{0.5, 0.05, 0.75} {
		tg.Containers = []ContainerCandidate{{Name: "app", Signals: map[string]float64{"gcPause": v}}}
		res, err := p.Evaluate(context.Background(), tg, now)
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		want := 0
		if v > 0.1 {
			want = 1
		}
		if len(res[0].Matches) != want || (want == 1 && res[0].Matches[0].Reason != fmt.Sprint(v)) {
			t.Errorf("gcPause %g: matches %+v", v, res[0].Matches)
		}
	}
}

// A rule's no data that reads the pod's signals follows their values:
// the no-data results kept for a pod are not those of other signals.
func TestNoDataFollowsPodSignals(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	rule := `package sig
import rego.v1
recreate contains c.name if {
	some c in input.containers
	input.signals.queue > 10
}
no_data contains {"container": c.name, "signal": "signals.queue"} if {
	some c in input.containers
	not input.signals.queue
}
`
	p := program(t, Options{}, Rule{Name: "sig", Module: rule})
	tg := target(now)
	tg.Containers = []ContainerCandidate{{Name: "app"}}
	for _, step := range []struct {
		signals map[string]float64
		noData  int
	}{{nil, 1}, {map[string]float64{"queue": 1}, 0}, {nil, 1}, {map[string]float64{"queue": 2}, 0}} {
		tg.Signals = step.signals
		res, err := p.Evaluate(context.Background(), tg, now)
		if err != nil || res[0].Err != nil {
			t.Fatal(err, res[0].Err)
		}
		if len(res[0].NoData) != step.noData {
			t.Errorf("signals %v: no data %+v, want %d", step.signals, res[0].NoData, step.noData)
		}
	}
}
