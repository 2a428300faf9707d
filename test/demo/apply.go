package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// samples are applied in this order: the namespace first.
var samples = []string{"namespace.yaml", "stuck-readiness.yaml", "rolling-restart.yaml", "memory-leak.yaml", "custom-rule.yaml"}

func sampleList() string { return strings.Join(samples, ", ") }

// applySamples applies each document of the samples, as kubectl apply
// --server-side would.
func applySamples(ctx context.Context, c client.Client) error {
	root, err := harness.RepoRoot()
	if err != nil {
		return err
	}
	for _, file := range samples {
		raw, err := os.ReadFile(filepath.Join(root, "config", "samples", file))
		if err != nil {
			return err
		}
		for doc := range bytes.SplitSeq(raw, []byte("\n---")) {
			var m map[string]any
			if err := yaml.Unmarshal(doc, &m); err != nil {
				return fmt.Errorf("read %s: %w", file, err)
			}
			if len(m) == 0 {
				continue
			}
			u := &unstructured.Unstructured{Object: m}
			if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("rejuv-demo"), client.ForceOwnership); err != nil {
				return fmt.Errorf("apply %s %s from %s: %w", u.GetKind(), u.GetName(), file, err)
			}
		}
	}
	return nil
}
