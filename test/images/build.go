package images

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// epoch is every timestamp in the image, so that an unchanged binary gives
// the same digest.
var epoch = time.Unix(0, 0).UTC()

// Build compiles img's program for linux on the host's architecture, makes a
// single-layer image of it and writes that as a docker-save tarball named
// NAME.tar in outDir, which it creates if need be. It returns the tarball's
// path. It must run from inside the Rejuv module, which it builds in.
func Build(ctx context.Context, img Image, outDir string) (string, error) {
	path, err := build(ctx, img, outDir)
	if err != nil {
		return "", fmt.Errorf("build image %s: %w", img.Ref(), err)
	}
	return path, nil
}

func build(ctx context.Context, img Image, outDir string) (string, error) {
	tag, err := name.NewTag(img.Ref(), name.StrictValidation)
	if err != nil {
		return "", err
	}
	var busybox string
	if img.Busybox {
		// Before compiling: a missing busybox should not cost a build to learn.
		if busybox, err = findBusybox(); err != nil {
			return "", err
		}
	}
	tmp, err := os.MkdirTemp("", "rejuv-image-"+img.Name+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)

	binary := filepath.Join(tmp, img.Name)
	if err := compile(ctx, img.Package, binary); err != nil {
		return "", fmt.Errorf("compile %s: %w", img.Package, err)
	}
	layerPath := filepath.Join(tmp, "layer.tar")
	if err := writeLayer(layerPath, rootfs(img.Name, binary, busybox)); err != nil {
		return "", fmt.Errorf("write layer: %w", err)
	}
	image, err := assemble(img, layerPath)
	if err != nil {
		return "", fmt.Errorf("assemble: %w", err)
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return "", fmt.Errorf("create output directory: %w", err)
	}
	out := filepath.Join(outDir, img.Name+".tar")
	if err := writeTarball(out, tag, image); err != nil {
		return "", fmt.Errorf("write %s: %w", out, err)
	}
	return out, nil
}

// assemble makes the image of the single layer at layerPath.
func assemble(img Image, layerPath string) (v1.Image, error) {
	layer, err := tarball.LayerFromFile(layerPath, tarball.WithCompressedCaching)
	if err != nil {
		return nil, err
	}
	created := v1.Time{Time: epoch}
	base, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: runtime.GOARCH,
		OS:           "linux",
		Created:      created,
		RootFS:       v1.RootFS{Type: "layers"},
		Config: v1.Config{
			Entrypoint: []string{"/" + img.Name},
			Env:        []string{"PATH=/bin"},
		},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(base, mutate.Addendum{
		Layer:   layer,
		History: v1.History{Created: created, CreatedBy: "rejuv test/images: " + img.Package},
	})
}

// writeTarball writes through a temporary file so that a failed build never
// leaves a truncated tarball for `ctr images import` to choke on.
func writeTarball(path string, tag name.Tag, image v1.Image) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	// CreateTemp makes the file private; the tarball is for whoever imports it.
	if err := f.Chmod(0o644); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := tarball.Write(tag, image, f); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// compile builds pkg as a static, stripped linux binary at out, from the root
// of the module the caller's working directory is in.
func compile(ctx context.Context, pkg, out string) error {
	gotool := goTool()
	root, err := moduleRoot(ctx, gotool)
	if err != nil {
		return err
	}
	// -buildvcs=false: VCS stamps would change the binary, hence the digest,
	// with every commit, and fail where git distrusts the checkout's owner.
	cmd := exec.CommandContext(ctx, gotool, "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
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
