package config

import (
	"fmt"
	"strings"
	"testing"

	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/rejuv-dev/rejuv/test/docgen"
)

// TestHelmValuesDoc writes (make docs) or checks (make verify)
// docs/helm-values.md: every value of the chart, its default and its
// comment in values.yaml. A value whose comment is missing, and whose
// section's comment does not name it, fails the test.
func TestHelmValuesDoc(t *testing.T) {
	root, err := kyaml.Parse(string(readFile(t, "helm/rejuv/values.yaml")))
	if err != nil {
		t.Fatalf("values.yaml: %v", err)
	}
	var rows []valueRow
	valueRows(root.YNode(), "", "", &rows)
	if len(rows) < 30 {
		t.Fatalf("%d values read from values.yaml: fewer than the chart has", len(rows))
	}
	var b strings.Builder
	b.WriteString("| value | default | meaning |\n|---|---|---|\n")
	for _, r := range rows {
		if r.meaning == "" {
			t.Errorf("values.yaml: %s has no comment, and its section's does not name it", r.path)
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", r.path, r.def, r.meaning)
	}
	doc := strings.Replace(docgen.Template(t, "config/testdata/helm-values.md.tmpl"), "{{values}}", strings.TrimSuffix(b.String(), "\n"), 1)
	docgen.Settle(t, "docs/helm-values.md", doc)
}

// valueRow is one value of the chart.
type valueRow struct{ path, def, meaning string }

// valueRows lists, under prefix, each key of the mapping n that has a
// comment, and each scalar or empty value (a setting), in order: a key
// whose value is a mapping of settings is listed with its comment, then
// its settings; a mapping or list that is a value (resources, affinity)
// is listed whole. parent is the comment of the section, for a setting
// that has none but is named by it.
func valueRows(n *kyaml.Node, prefix, parent string, rows *[]valueRow) {
	if n.Kind == kyaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i], n.Content[i+1]
		path := prefix + key.Value
		comment := commentText(key.HeadComment)
		section := value.Kind == kyaml.MappingNode && len(value.Content) > 0 && settings(value)
		if section {
			if comment != "" {
				*rows = append(*rows, valueRow{path, "", comment})
			}
			valueRows(value, path+".", comment, rows)
			continue
		}
		if comment == "" && strings.Contains(parent, key.Value) {
			comment = "see `" + strings.TrimSuffix(prefix, ".") + "`"
		}
		*rows = append(*rows, valueRow{path, defaultOf(value), comment})
	}
}

// settings holds when a mapping's keys are the chart's settings (each
// commented or a scalar), not a Kubernetes object's fields given whole.
func settings(m *kyaml.Node) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].HeadComment != "" {
			return true
		}
	}
	return false
}

// defaultOf is a value as a table cell: a scalar as it is, anything else
// in YAML's flow style.
func defaultOf(v *kyaml.Node) string {
	if v.Kind == kyaml.ScalarNode {
		if v.Value == "" {
			return `""`
		}
		return "`" + v.Value + "`"
	}
	flow := *v
	flow.Style = kyaml.FlowStyle
	out, err := kyaml.String(&flow, kyaml.Flow)
	if err != nil {
		return "see values.yaml"
	}
	return "`" + strings.ReplaceAll(strings.TrimSpace(out), "|", `\|`) + "`"
}

// commentText is a head comment as one line of text.
func commentText(c string) string {
	var words []string
	for line := range strings.SplitSeq(c, "\n") {
		words = append(words, strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "#"))...)
	}
	return strings.ReplaceAll(strings.Join(words, " "), "|", `\|`)
}
