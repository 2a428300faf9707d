package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/rejuv-dev/rejuv/test/images"
)

// image is one of Rejuv's images as the release built and pushed it.
type image struct {
	// Name is its name in config/ (rejuv-healer), File its archive.
	Name, File string
	// Pushed is its reference by digest in the registry, Digest the
	// digest alone (of its index).
	Pushed, Digest string
	Platforms      []string
}

// buildImages builds the manager's, the daemon's and the demo app's
// images for every image platform, writes their archives and pushes them.
func buildImages(ctx context.Context, o options) ([]image, error) {
	platforms, err := parsePlatforms("-image-platforms", o.imagePlatforms)
	if err != nil {
		return nil, err
	}
	var vs []v1.Platform
	for _, p := range platforms {
		vs = append(vs, v1.Platform{OS: p.os, Architecture: p.arch})
	}
	var out []image
	for _, img := range []images.Image{images.Healer(o.version, o.commit), images.Daemon(o.version, o.commit), images.Demo(o.version, o.commit)} {
		a, err := images.BuildAndPush(ctx, img, vs, o.out, o.registry)
		if err != nil {
			return nil, err
		}
		im := image{Name: img.Name, File: filepath.Base(a.Path), Pushed: a.Pushed, Digest: a.Digest.String()}
		for _, p := range platforms {
			im.Platforms = append(im.Platforms, p.String())
		}
		out = append(out, im)
	}
	return out, nil
}

// platform is an os/arch pair.
type platform struct{ os, arch string }

func (p platform) String() string { return p.os + "/" + p.arch }

func parsePlatforms(flag, list string) ([]platform, error) {
	var out []platform
	for p := range strings.SplitSeq(list, ",") {
		goos, arch, ok := strings.Cut(strings.TrimSpace(p), "/")
		if !ok || goos == "" || arch == "" {
			return nil, fmt.Errorf("%s: %q is not os/arch", flag, p)
		}
		out = append(out, platform{goos, arch})
	}
	return out, nil
}
