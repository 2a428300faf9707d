package images

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestBuildAndPush: an image built for two platforms is pushed to a
// registry as the same index the archive holds: pulling its tag gives the
// archive's digest and both platforms, and the reference returned names
// that digest.
func TestBuildAndPush(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a program for two platforms")
	}
	server := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(server.Close)
	u, err := url.Parse(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	platforms := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "arm64"}}
	a, err := BuildAndPush(context.Background(), Pause, platforms, t.TempDir(), u.Host)
	if err != nil {
		t.Fatal(err)
	}
	if want := u.Host + "/pause@" + a.Digest.String(); a.Pushed != want {
		t.Errorf("pushed as %q, want %q", a.Pushed, want)
	}
	ref, err := name.ParseReference(Pause.RefIn(u.Host))
	if err != nil {
		t.Fatal(err)
	}
	index, err := remote.Index(ref)
	if err != nil {
		t.Fatalf("pull %s: %v", ref, err)
	}
	digest, err := index.Digest()
	if err != nil {
		t.Fatal(err)
	}
	if digest != a.Digest {
		t.Errorf("the registry serves %s as %s, the archive holds %s", ref, digest, a.Digest)
	}
	manifest, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range manifest.Manifests {
		got = append(got, m.Platform.String())
	}
	if want := []string{"linux/amd64", "linux/arm64"}; !slices.Equal(got, want) {
		t.Errorf("the pushed index holds %v, want %v", got, want)
	}
}
