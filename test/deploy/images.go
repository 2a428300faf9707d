package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rejuv-dev/rejuv/config"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/images"
)

// Commit is what the test images stamp as their commit.
const Commit = "e2e"

// Pushed are Rejuv's images as PushImages pushed them to the cluster's
// registry.
type Pushed struct {
	// Registry is where they are (host:port).
	Registry string
	// Healer and Daemon are the images by digest, e.g.
	// 127.0.0.1:20500/rejuv-healer@sha256:...
	Healer, Daemon string
}

// PushImages builds Rejuv's images for the node's platform, tagged with
// Rejuv's version as the manifests name them, and pushes them to the
// cluster's registry, as make images REGISTRY=... does. The node forgets
// what it pulled before under those tags when it differs, so an install
// that names them by tag pulls these.
func PushImages(ctx context.Context, cluster *harness.Cluster) (Pushed, error) {
	version, err := config.Version()
	if err != nil {
		return Pushed{}, err
	}
	p := Pushed{Registry: cluster.Config.Registry()}
	for _, to := range []struct {
		img images.Image
		ref *string
	}{{images.Healer(version, Commit), &p.Healer}, {images.Daemon(version, Commit), &p.Daemon}} {
		a, err := cluster.BuildImage(ctx, to.img)
		if err != nil {
			return Pushed{}, err
		}
		*to.ref = a.Pushed
	}
	return p, nil
}

// Kustomization writes, in dir, a kustomization of the one at base that
// pulls Rejuv's images from where p says, by digest: the override of
// README's "Install from a registry".
func (p Pushed) Kustomization(dir, base string) error {
	rel, err := filepath.Rel(dir, base)
	if err != nil {
		return fmt.Errorf("kustomization of %s: %w", base, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s with Rejuv's images from the cluster's registry, by digest.\nresources:\n- %s\nimages:\n", base, filepath.ToSlash(rel))
	for _, ref := range []string{p.Healer, p.Daemon} {
		repo, digest, ok := strings.Cut(ref, "@")
		if !ok {
			return fmt.Errorf("kustomization of %s: image %q is not by digest", base, ref)
		}
		fmt.Fprintf(&b, "- name: %s\n  newName: %s\n  digest: %s\n", filepath.Base(repo), repo, digest)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("kustomization of %s: %w", base, err)
	}
	return os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(b.String()), 0o644)
}
