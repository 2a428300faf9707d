package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/config/installfile"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/images"
)

// applySamples applies config/samples as kustomize builds it (the
// namespace first), as kubectl apply --server-side -k would, with the demo
// app's image renamed to pushed (REGISTRY/rejuv-demo@sha256:...): the
// override of an overlay that config/samples/README.md shows.
func applySamples(ctx context.Context, c client.Client, pushed string) error {
	root, err := harness.RepoRoot()
	if err != nil {
		return err
	}
	repo, digest, ok := strings.Cut(pushed, "@")
	if !ok {
		return fmt.Errorf("the demo app's image %q is not by digest", pushed)
	}
	dir := filepath.Join(root, "config", "samples")
	out, err := installfile.Build(dir, types.Image{Name: images.DemoRepository, NewName: repo, Digest: digest})
	if err != nil {
		return err
	}
	for doc := range bytes.SplitSeq(out, []byte("\n---\n")) {
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			return fmt.Errorf("read config/samples: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("rejuv-demo"), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply %s %s from config/samples: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}
