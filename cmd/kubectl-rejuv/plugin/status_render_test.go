package plugin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rejuv-dev/rejuv/api/rejuv/v1alpha1"
)

func fixtureStatus() *statusReport {
	r := &statusReport{Target: "namespace shop"}
	for _, q := range fixtureRequests() {
		r.Requests = append(r.Requests, requestStatusOf(&q))
	}
	for _, p := range fixturePolicies() {
		r.Policies = append(r.Policies, policyStatusOf(&p, func(*v1alpha1.Decision) bool { return true }))
	}
	return r
}

// TestStatusOutputs: the status tables, wide, across namespaces, and as
// JSON and YAML.
func TestStatusOutputs(t *testing.T) {
	for _, tc := range []struct {
		name string
		text statusText
		data string
	}{
		{name: "status.txt", text: statusText{now: now}},
		{name: "status-wide.txt", text: statusText{now: now, wide: true}},
		{name: "status-all.txt", text: statusText{now: now, allNamespaces: true}},
		{name: "status.json", data: "json"},
		{name: "status.yaml", data: "yaml"},
		{name: "status-names.txt", data: "name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			var err error
			switch tc.data {
			case "name":
				var text string
				text, err = (&status{output: "name", now: func() time.Time { return now }}).text(fixtureStatus())
				b.WriteString(text)
			case "json", "yaml":
				err = printData(&b, fixtureStatus(), tc.data)
			default:
				tc.text.w = &b
				err = tc.text.render(fixtureStatus())
			}
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, b.Bytes())
		})
	}
}

// TestStatusOfNothing says so rather than printing empty tables.
func TestStatusOfNothing(t *testing.T) {
	var b bytes.Buffer
	if err := (statusText{w: &b, now: now}).render(&statusReport{Target: "deployment/web"}); err != nil {
		t.Fatal(err)
	}
	if got, want := b.String(), "Nothing is being recreated in deployment/web, and no RecreatePolicy selects it.\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestStatusOfARequestByHand shows the request alone: no policy section
// for a request no policy made.
func TestStatusOfARequestByHand(t *testing.T) {
	reqs := fixtureRequests()
	r := &statusReport{Target: "containerrecreaterequest/web-0-x7k2p", Requests: []requestStatus{requestStatusOf(&reqs[0])}}
	var b bytes.Buffer
	if err := (statusText{w: &b, now: now}).render(r); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "RecreatePolicy") || !strings.Contains(b.String(), "web-0-x7k2p") {
		t.Errorf("status of a request by hand:\n%s", b.String())
	}
}
