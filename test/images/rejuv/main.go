// Command rejuv builds Rejuv's images (rejuv-healer and rejuv-daemon, and
// the demo app rejuv-demo) as
// archives for `ctr images import`, `docker load` and `kind load
// image-archive`, one index of every platform asked for each, pushes them
// to a registry when given one, and prints their sizes. make images runs
// it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/rejuv-dev/rejuv/config"
	"github.com/rejuv-dev/rejuv/test/images"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "images: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	version, err := config.Version()
	if err != nil {
		return err
	}
	out := flag.String("out", "bin/images", "directory the archives are written to")
	commit := flag.String("commit", "unknown", "the commit stamped into the binaries")
	platformList := flag.String("platforms", "linux/amd64,linux/arm64", "comma-separated os/arch list each index holds")
	registry := flag.String("registry", "", "a registry (host[:port][/path]) to push the images to as well: plain http to a loopback or private address, https otherwise, with the credentials of docker login; none when empty")
	flag.Parse()
	platforms, err := images.ParsePlatforms(*platformList)
	if err != nil {
		return fmt.Errorf("-platforms: %w", err)
	}
	if len(platforms) == 0 {
		return errors.New("-platforms: empty")
	}
	ctx := context.Background()
	for _, img := range []images.Image{images.Healer(version, *commit), images.Daemon(version, *commit), images.Demo(version, *commit)} {
		a, err := images.BuildAndPush(ctx, img, platforms, *out, *registry)
		if err != nil {
			return err
		}
		fmt.Printf("%s -> %s\n", a.Ref, a.Path)
		if a.Pushed != "" {
			fmt.Printf("  pushed as %s\n", a.Pushed)
		}
		for _, p := range a.Platforms {
			fmt.Printf("  %-12s %s  %5.1f MiB compressed, %5.1f MiB unpacked\n", p.Platform.String(), p.Digest.Hex[:12],
				float64(p.Compressed)/(1<<20), float64(p.Unpacked)/(1<<20))
		}
	}
	return nil
}
