package deploy

import (
	"context"
	"fmt"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/rejuv-dev/rejuv/config"
	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/images"
)

// Commit is what the test images stamp as their commit.
const Commit = "e2e"

// LoadImages builds Rejuv's images for the node's platform, tagged with
// Rejuv's version as the manifests name them, and imports them into the
// node's containerd, as `ctr images import` of make images' archives does.
func LoadImages(ctx context.Context, cluster *harness.Cluster) error {
	version, err := config.Version()
	if err != nil {
		return err
	}
	dir := cluster.Config.Dir + "/images"
	for _, img := range []images.Image{images.Healer(version, Commit), images.Daemon(version, Commit)} {
		a, err := images.BuildFor(ctx, img, []v1.Platform{images.HostPlatform()}, dir)
		if err != nil {
			return err
		}
		if err := cluster.LoadImage(ctx, a.Path); err != nil {
			return fmt.Errorf("load %s onto the node: %w", a.Ref, err)
		}
	}
	return nil
}
