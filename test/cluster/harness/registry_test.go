package harness

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/rejuv-dev/rejuv/test/images"
)

// TestRegistryServesWhatIsPushed: the cluster's registry, started as the
// harness starts it, takes an image pushed to it, serves it back by tag
// under the digest it was pushed with, and keeps its blobs in the
// directory it was given.
func TestRegistryServesWhatIsPushed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts the registry")
	}
	ctx := context.Background()
	port, err := freePort("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Dir: t.TempDir(), Ports: Ports{Registry: port}}
	if err := buildRegistry(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	s := registryStep(cfg)
	p, err := startProcess(t.TempDir(), s.spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(5 * time.Second) })
	if err := p.waitReady(ctx, 30*time.Second, s.ready); err != nil {
		t.Fatalf("the registry did not answer at %s: %v", cfg.Registry(), err)
	}

	a, err := images.BuildAndPush(ctx, images.Pause, []v1.Platform{images.HostPlatform()}, t.TempDir(), cfg.Registry())
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(images.Pause.RefIn(cfg.Registry()))
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Head(ref, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("the registry does not serve %s: %v", ref, err)
	}
	if desc.Digest != a.Digest {
		t.Errorf("the registry serves %s as %s, it was pushed as %s", ref, desc.Digest, a.Digest)
	}
	blobs, err := filepath.Glob(cfg.path("registry", "*"))
	if err != nil || len(blobs) == 0 {
		t.Errorf("no blob kept in %s (%v)", cfg.path("registry"), err)
	}
}
