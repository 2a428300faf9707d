package harness

import (
	"context"
	"fmt"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/test/images"
)

// The node gets every image the way a node of any cluster does: the image
// is pushed to the cluster's registry and the kubelet (or containerd, for
// the sandbox image) pulls it. A test image keeps its tag (dev) while its
// content changes from one build to the next, and the node's image store
// outlives the cluster; so a push also drops the node's copy of that tag
// when it is not what was pushed, and the next pod pulls again.

// BuildImage builds an image (a test image, or one of Rejuv's) for the
// node's platform, pushes it to the cluster's registry under the
// registry's address (img.RefIn), and returns its archive (Pushed is the
// image by digest there). The node pulls it by that name, or, for a test
// image, by its own (rejuv.local/NAME:dev), which the node's registry
// hosts send to the same registry.
func (c *Cluster) BuildImage(ctx context.Context, img images.Image) (*images.Archive, error) {
	return pushImage(ctx, c.Config, img)
}

func pushImage(ctx context.Context, cfg Config, img images.Image) (*images.Archive, error) {
	a, err := images.BuildAndPush(ctx, img, []v1.Platform{images.HostPlatform()}, cfg.path("images"), cfg.Registry())
	if err != nil {
		return nil, err
	}
	for _, n := range cfg.Nodes() {
		if err := dropStaleImages(ctx, n.CRISocket, a.Digest.String(), img.Ref(), img.RefIn(cfg.Registry())); err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
	}
	return a, nil
}

// dropStaleImages removes each of the node's image refs (by tag) unless it
// is the image whose index (or manifest) digest is digest, so that the next
// pod that names it pulls what was pushed.
func dropStaleImages(ctx context.Context, socket, digest string, refs ...string) error {
	_, is, conn, err := DialCRI(socket)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, ref := range refs {
		if err := dropStaleImage(ctx, is, ref, digest); err != nil {
			return err
		}
	}
	return nil
}

func dropStaleImage(ctx context.Context, is runtimeapi.ImageServiceClient, ref, digest string) error {
	spec := &runtimeapi.ImageSpec{Image: ref}
	st, err := is.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	if err != nil {
		return fmt.Errorf("look up the node's image %s: %w", ref, err)
	}
	if st.GetImage() == nil {
		return nil
	}
	for _, d := range st.GetImage().GetRepoDigests() {
		if strings.HasSuffix(d, "@"+digest) {
			return nil
		}
	}
	if _, err := is.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: spec}); err != nil {
		return fmt.Errorf("remove the node's stale image %s: %w", ref, err)
	}
	return nil
}
