package e2e

import (
	"context"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
	"github.com/rejuv-dev/rejuv/test/images"
)

// TestMultiPlatformArchiveLoadsIntoContainerd builds an image for two
// platforms the way make images builds Rejuv's, and imports it into the
// node's containerd as kind's `load image-archive` does (ctr import
// --all-platforms): containerd keeps the index with both platforms.
func TestMultiPlatformArchiveLoadsIntoContainerd(t *testing.T) {
	t.Parallel()
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	img := images.Pause
	img.Repository, img.Tag = "rejuv.local/e2e-multiarch", "v0.0.1"
	a, err := images.BuildFor(context.Background(), img, []v1.Platform{images.HostPlatform(), {OS: "linux", Architecture: other}}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctr := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(cluster.Config.Tools.Ctr, append([]string{"--address", cluster.CRISocket(), "--namespace", "e2e-images"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	t.Cleanup(func() {
		_ = exec.Command(cluster.Config.Tools.Ctr, "--address", cluster.CRISocket(), "--namespace", "e2e-images", "images", "rm", "rejuv.local/e2e-multiarch:v0.0.1").Run()
	})
	ctr("images", "import", "--all-platforms", a.Path)
	var line string
	for l := range strings.SplitSeq(ctr("images", "ls"), "\n") {
		if strings.HasPrefix(l, "rejuv.local/e2e-multiarch:v0.0.1 ") {
			line = l
		}
	}
	if !strings.Contains(line, "application/vnd.oci.image.index.v1+json") || !strings.Contains(line, "linux/amd64") || !strings.Contains(line, "linux/arm64") {
		t.Errorf("containerd lists %q, want the index of linux/amd64 and linux/arm64", line)
	}
}

// TestMultiPlatformImagePullsFromTheRegistry: an index of two platforms,
// pushed to the cluster's registry as make images REGISTRY=... pushes
// Rejuv's, is pulled by the node through the CRI, as the kubelet pulls it:
// containerd resolves the index to the node's platform and keeps the image
// under the index's digest.
func TestMultiPlatformImagePullsFromTheRegistry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	other := "arm64"
	if runtime.GOARCH == "arm64" {
		other = "amd64"
	}
	img := images.Pause
	img.Repository, img.Tag = "rejuv.local/e2e-multiarch-pull", "v0.0.1"
	a, err := images.BuildAndPush(ctx, img, []v1.Platform{images.HostPlatform(), {OS: "linux", Architecture: other}}, t.TempDir(), cluster.Config.Registry())
	if err != nil {
		t.Fatal(err)
	}
	_, is, conn, err := harness.DialCRI(cluster.CRISocket())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	spec := &runtimeapi.ImageSpec{Image: img.RefIn(cluster.Config.Registry())}
	t.Cleanup(func() { _, _ = is.RemoveImage(ctx, &runtimeapi.RemoveImageRequest{Image: spec}) })
	if _, err := is.PullImage(ctx, &runtimeapi.PullImageRequest{Image: spec}); err != nil {
		t.Fatalf("pull %s: %v", spec.Image, err)
	}
	st, err := is.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: spec})
	if err != nil || st.GetImage() == nil {
		t.Fatalf("status of %s after the pull: %v (%v)", spec.Image, st, err)
	}
	if want := a.Pushed; !slices.Contains(st.GetImage().GetRepoDigests(), want) {
		t.Errorf("the node keeps %s as %v, want %s (the index pushed)", spec.Image, st.GetImage().GetRepoDigests(), want)
	}
}
