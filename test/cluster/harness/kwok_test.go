package harness

import (
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// TestKwokStagesParse: each of the harness's kwok stages is a Stage with a
// name, and its status template is a template kwok can parse (with stand-ins
// for kwok's own functions), so that a typo shows here rather than as a
// node that never becomes Ready in the benchmark.
func TestKwokStagesParse(t *testing.T) {
	stub := func(...any) string { return "" }
	funcs := template.FuncMap{
		"Now": stub, "Quote": stub, "NodeConditions": func() []map[string]string { return nil }, "NodeIP": stub, "NodeIPWith": stub,
		"PodIPsWith": func(...any) []string { return nil }, "Version": stub, "sha256sum": stub,
	}
	names := map[string]bool{}
	for doc := range strings.SplitSeq(kwokStages, "\n---\n") {
		var stage struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Spec struct {
				ResourceRef struct {
					Kind string `json:"kind"`
				} `json:"resourceRef"`
				Next struct {
					StatusTemplate string `json:"statusTemplate"`
					Delete         bool   `json:"delete"`
				} `json:"next"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal([]byte(doc), &stage); err != nil {
			t.Fatalf("stage does not parse: %v\n%s", err, doc)
		}
		if stage.Kind != "Stage" || stage.Metadata.Name == "" || stage.Spec.ResourceRef.Kind == "" {
			t.Errorf("stage %+v: want kind Stage, a name and a resource", stage)
		}
		if stage.Spec.Next.StatusTemplate == "" && !stage.Spec.Next.Delete {
			t.Errorf("stage %s does nothing", stage.Metadata.Name)
		}
		if _, err := template.New(stage.Metadata.Name).Funcs(funcs).Parse(stage.Spec.Next.StatusTemplate); err != nil {
			t.Errorf("stage %s: %v", stage.Metadata.Name, err)
		}
		names[stage.Metadata.Name] = true
	}
	for _, want := range []string{"rejuv-node-ready", "rejuv-pod-ready", "rejuv-pod-ready-again", "rejuv-pod-delete"} {
		if !names[want] {
			t.Errorf("no stage %s among %v", want, names)
		}
	}
}
