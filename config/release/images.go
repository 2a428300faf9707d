package main

import (
	"context"
	"fmt"
	"path/filepath"

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
	platforms, err := images.ParsePlatforms(o.imagePlatforms)
	if err != nil {
		return nil, fmt.Errorf("-image-platforms: %w", err)
	}
	var out []image
	for _, img := range []images.Image{images.Healer(o.version, o.commit), images.Daemon(o.version, o.commit), images.Demo(o.version, o.commit)} {
		a, err := images.BuildAndPush(ctx, img, platforms, o.out, o.registry)
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
