package signals

import (
	"errors"
	"fmt"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// NamespaceLabel is the label of a series that names the namespace of the
// pod it describes, as cAdvisor's, kube-state-metrics' and Prometheus'
// Kubernetes service discovery set it.
const NamespaceLabel = "namespace"

// promql parses queries as the Prometheus of the same version does with its
// default features.
var promql = parser.NewParser(parser.Options{})

// Scope returns query with every series selector in it limited to
// namespace, as the policy's signal may read only its own namespace's
// series: a selector with no namespace matcher gets namespace="<ns>", one
// whose namespace matchers also match ns keeps them beside that one. It
// refuses a query that is not PromQL, that does not return an instant
// vector, that has a selector reading no series of namespace, or that reads
// series no selector of it names (info()). The query is parsed, rewritten
// and printed by Prometheus' own parser, never edited as text.
//
// Functions that make series up (label_replace, label_join, vector,
// absent, a join with on()) can still label a result with namespace; they
// read nothing outside it, which is what matters.
func Scope(query, namespace string) (string, error) {
	expr, err := promql.ParseExpr(query)
	if err != nil {
		return "", fmt.Errorf("not PromQL: %w", err)
	}
	if t := expr.Type(); t != parser.ValueTypeVector {
		name := map[parser.ValueType]string{parser.ValueTypeMatrix: "range vector"}[t]
		if name == "" {
			name = string(t)
		}
		return "", fmt.Errorf("it returns a %s, not an instant vector with a series per pod", name)
	}
	var errs []error
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		switch n := node.(type) {
		case *parser.VectorSelector:
			errs = append(errs, limit(n, namespace))
		case *parser.Call:
			// Experimental, so refused by the parser today; should a
			// Prometheus enable it, it still may not read unscoped.
			if n.Func.Name == "info" {
				errs = append(errs, errors.New("info() reads series that no selector of the query names; join with target_info{...} instead"))
			}
		}
		return nil
	})
	if err := errors.Join(errs...); err != nil {
		return "", err
	}
	scoped := expr.String()
	if err := onlyIn(scoped, namespace); err != nil {
		return "", fmt.Errorf("the scoped query %q: %w", scoped, err)
	}
	return scoped, nil
}

// limit adds namespace="<ns>" to a selector, or refuses it when a
// namespace matcher of its own excludes ns.
func limit(s *parser.VectorSelector, namespace string) error {
	for _, m := range s.LabelMatchers {
		if m.Name == NamespaceLabel && !m.Matches(namespace) {
			return fmt.Errorf("selector %s reads no series of namespace %s, the policy's: leave the namespace matcher out (namespace=%q is added) or write namespace=%q", s, namespace, namespace, namespace)
		}
	}
	if equalsNamespace(s, namespace) {
		return nil
	}
	m, err := labels.NewMatcher(labels.MatchEqual, NamespaceLabel, namespace)
	if err != nil {
		return fmt.Errorf("namespace matcher for %s: %w", namespace, err)
	}
	s.LabelMatchers = append(s.LabelMatchers, m)
	return nil
}

// onlyIn checks a scoped query as it will be sent: parsed again, every
// selector has namespace="<ns>".
func onlyIn(query, namespace string) error {
	expr, err := promql.ParseExpr(query)
	if err != nil {
		return err
	}
	var unscoped []string
	parser.Inspect(expr, func(node parser.Node, _ []parser.Node) error {
		if s, ok := node.(*parser.VectorSelector); ok && !equalsNamespace(s, namespace) {
			unscoped = append(unscoped, s.String())
		}
		return nil
	})
	if len(unscoped) > 0 {
		return fmt.Errorf("selectors %v are not limited to namespace %s", unscoped, namespace)
	}
	return nil
}

func equalsNamespace(s *parser.VectorSelector, namespace string) bool {
	for _, m := range s.LabelMatchers {
		if m.Name == NamespaceLabel && m.Type == labels.MatchEqual && m.Value == namespace {
			return true
		}
	}
	return false
}
