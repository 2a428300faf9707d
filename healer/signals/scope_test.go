package signals

import (
	"strings"
	"testing"
)

// TestScope: every selector of a tenant's query reads only the policy's
// namespace, or the query is refused saying why.
func TestScope(t *testing.T) {
	for _, tc := range []struct {
		query, want, refused string
	}{
		{query: `sum by (namespace, pod) (container_memory_working_set_bytes{namespace="a"})`,
			want: `sum by (namespace, pod) (container_memory_working_set_bytes{namespace="a"})`},
		{query: `rate(http_requests_total[5m])`, want: `rate(http_requests_total{namespace="a"}[5m])`},
		{query: `max_over_time(rate(x[1m])[10m:1m])`, want: `max_over_time(rate(x{namespace="a"}[1m])[10m:1m])`},
		{query: `up{namespace=~"a|b"}`, want: `up{namespace="a",namespace=~"a|b"}`},
		{query: `{__name__=~".+"}`, want: `{__name__=~".+",namespace="a"}`},
		{query: `x @ start()`, want: `x{namespace="a"} @ start()`},
		{query: `absent(foo)`, want: `absent(foo{namespace="a"})`},
		{query: `vector(1)`, want: `vector(1)`},
		{query: `label_replace(sum(container_memory_working_set_bytes{namespace="b"}), "namespace", "a", "", "")`,
			refused: `selector container_memory_working_set_bytes{namespace="b"} reads no series of namespace a, the policy's`},
		{query: `x{namespace!="a"}`, refused: `selector x{namespace!="a"} reads no series of namespace a`},
		{query: `sum(x) / on() group_left() sum(y{namespace="kube-system"})`, refused: `selector y{namespace="kube-system"} reads no series of namespace a`},
		{query: `info(x)`, refused: `not PromQL: 1:1: parse error: function "info" is not enabled`},
		{query: `sum(rate(x[5m]`, refused: "not PromQL"},
		{query: `x[5m]`, refused: "it returns a range vector, not an instant vector"},
		{query: `1`, refused: "it returns a scalar, not an instant vector"},
	} {
		got, err := Scope(tc.query, "a")
		switch {
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%s: got %q, %v; want refused with %q", tc.query, got, err, tc.refused)
		case tc.refused == "" && (err != nil || got != tc.want):
			t.Errorf("%s: got %q, %v; want %q", tc.query, got, err, tc.want)
		}
	}
}
