package images

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// epoch is every timestamp in the image, so that an unchanged binary gives
// the same digest.
var epoch = time.Unix(0, 0).UTC()

// HostPlatform is linux on the architecture the caller runs on.
func HostPlatform() v1.Platform {
	return v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
}

// ParsePlatforms reads a comma-separated list of os/arch pairs, such as
// "linux/amd64,linux/arm64".
func ParsePlatforms(list string) ([]v1.Platform, error) {
	var platforms []v1.Platform
	for p := range strings.SplitSeq(list, ",") {
		goos, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || goos == "" || arch == "" {
			return nil, fmt.Errorf("%q is not os/arch", p)
		}
		platforms = append(platforms, v1.Platform{OS: goos, Architecture: arch})
	}
	return platforms, nil
}

// Build builds img for linux on the host's architecture into NAME.tar in
// outDir (see BuildFor) and returns the archive's path. It must run from
// inside the Rejuv module, which it builds in.
func Build(ctx context.Context, img Image, outDir string) (string, error) {
	a, err := BuildFor(ctx, img, []v1.Platform{HostPlatform()}, outDir)
	if err != nil {
		return "", err
	}
	return a.Path, nil
}

// BuildFor compiles img's program for each platform, makes a single-layer
// image of each, and writes them as one archive, NAME.tar in outDir (created
// if need be), that holds an index of the platforms under img.Ref() (see
// writeArchive). It must run from inside the Rejuv module.
func BuildFor(ctx context.Context, img Image, platforms []v1.Platform, outDir string) (*Archive, error) {
	return BuildAndPush(ctx, img, platforms, outDir, "")
}

// BuildAndPush builds img as BuildFor does and, when registry (a host, with
// a port and a path if need be: 127.0.0.1:5000, ghcr.io/team) is set,
// pushes its index there too, under img.RefIn(registry): over plain http to
// a loopback or private address, https otherwise, with the credentials
// docker login keeps.
func BuildAndPush(ctx context.Context, img Image, platforms []v1.Platform, outDir, registry string) (*Archive, error) {
	a, err := buildFor(ctx, img, platforms, outDir, registry)
	if err != nil {
		return nil, fmt.Errorf("build image %s: %w", img.Ref(), err)
	}
	return a, nil
}

func buildFor(ctx context.Context, img Image, platforms []v1.Platform, outDir, registry string) (*Archive, error) {
	if len(platforms) == 0 {
		return nil, errors.New("no platform to build for")
	}
	tag, err := name.NewTag(img.Ref(), name.WeakValidation)
	if err != nil {
		return nil, err
	}
	var busybox string
	if img.Busybox {
		// Before compiling: a missing or unusable busybox should not cost a
		// build to learn.
		if busybox, err = findBusybox(); err != nil {
			return nil, err
		}
		for _, p := range platforms {
			if p.Architecture != runtime.GOARCH {
				return nil, fmt.Errorf("busybox is the host's (%s); cannot add it to an image for %s", runtime.GOARCH, p)
			}
		}
	}
	tmp, err := os.MkdirTemp("", "rejuv-image-"+img.Name+"-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	index := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range platforms {
		dir := filepath.Join(tmp, p.OS+"-"+p.Architecture)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		binary := filepath.Join(dir, img.Name)
		switch {
		case img.Binary == "":
			if err := compile(ctx, img.Package, p, img.LDFlags, binary); err != nil {
				return nil, fmt.Errorf("compile %s for %s: %w", img.Package, p, err)
			}
		case p.OS != runtime.GOOS || p.Architecture != runtime.GOARCH:
			return nil, fmt.Errorf("%s is built for the host (%s); cannot add it to an image for %s", img.Binary, HostPlatform(), p)
		default:
			binary = img.Binary
		}
		layerPath := filepath.Join(dir, "layer.tar")
		if err := writeLayer(layerPath, rootfs(img.Name, binary, busybox)); err != nil {
			return nil, fmt.Errorf("write layer: %w", err)
		}
		image, err := assemble(img, p, layerPath)
		if err != nil {
			return nil, fmt.Errorf("assemble for %s: %w", p, err)
		}
		index = mutate.AppendManifests(index, mutate.IndexAddendum{Add: image, Descriptor: v1.Descriptor{Platform: &p}})
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	out := filepath.Join(outDir, img.Name+".tar")
	sizes, err := writeArchive(out, tag, index)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", out, err)
	}
	digest, err := index.Digest()
	if err != nil {
		return nil, err
	}
	a := &Archive{Path: out, Ref: img.Ref(), Digest: digest, Platforms: sizes}
	if registry != "" {
		// Before the layers' files are removed.
		if a.Pushed, err = push(ctx, img.RefIn(registry), index, digest); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// push pushes index, whose digest is digest, as ref and returns ref by
// digest.
func push(ctx context.Context, ref string, index v1.ImageIndex, digest v1.Hash) (string, error) {
	tag, err := name.NewTag(ref)
	if err != nil {
		return "", fmt.Errorf("push as %s: %w", ref, err)
	}
	if err := remote.WriteIndex(tag, index, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	return tag.Context().Digest(digest.String()).String(), nil
}

// assemble makes the image of the single layer at layerPath for platform p.
func assemble(img Image, p v1.Platform, layerPath string) (v1.Image, error) {
	layer, err := tarball.LayerFromFile(layerPath, tarball.WithCompressedCaching, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: epoch}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	base, err = mutate.ConfigFile(base, &v1.ConfigFile{
		Architecture: p.Architecture,
		OS:           p.OS,
		Created:      created,
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: []string{"/" + img.Name},
			Env:        []string{"PATH=/bin"},
			User:       img.User,
			Labels:     img.Labels,
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(base, mutate.Addendum{
		Layer:     layer,
		History:   v1.History{Created: created, CreatedBy: "rejuv test/images: " + cmp.Or(img.Package, filepath.Base(img.Binary))},
		MediaType: types.OCILayer,
	})
}

// compile builds pkg as a static, stripped binary for platform p at out,
// from the root of the module the caller's working directory is in.
func compile(ctx context.Context, pkg string, p v1.Platform, ldflags, out string) error {
	gotool := goTool()
	root, err := moduleRoot(ctx, gotool)
	if err != nil {
		return err
	}
	// -buildvcs=false: VCS stamps would change the binary, hence the digest,
	// with every commit, and fail where git distrusts the checkout's owner.
	cmd := exec.CommandContext(ctx, gotool, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w "+ldflags, "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Architecture)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// goTool is the go command of the toolchain the caller was built with, so that
// tests build images with the Go they run with; failing that, go on PATH.
func goTool() string {
	//nolint:staticcheck // Deprecated for binaries copied elsewhere; under go test GOROOT is set and right.
	if root := runtime.GOROOT(); root != "" {
		p := filepath.Join(root, "bin", "go")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "go"
}

// moduleRoot is the directory of the go.mod governing the working directory.
func moduleRoot(ctx context.Context, gotool string) (string, error) {
	out, err := exec.CommandContext(ctx, gotool, "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("find module root: go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("find module root: working directory is not inside a Go module")
	}
	return filepath.Dir(gomod), nil
}
