// Command release cuts a release of Rejuv into one folder, every file a
// release publishes side by side (as a forge's release assets are):
//
//   - rejuv-healer.tar, rejuv-daemon.tar: the images, one index of every
//     platform asked for each, as archives (ctr import, kind load), also
//     pushed to -registry under the version's tag;
//   - install.yaml and install-openkruise.yaml: config/default and
//     config/openkruise in one file each, their images pinned by digest
//     in -registry;
//   - rejuv-VERSION.tgz: the Helm chart, its images pinned the same way;
//   - kubectl-rejuv_VERSION_OS_ARCH.tar.gz and rejuv.yaml: the plugin's
//     archives and krew manifest (config/krew), at -url-base;
//   - NAME_OS_ARCH.spdx.json: an SPDX SBOM of each binary shipped, read
//     from the binary itself;
//   - RELEASE_NOTES.md, from notes.md.tmpl, with the commits since the
//     previous release's tag;
//   - SHA256SUMS: the SHA-256 of every other file, for sha256sum -c.
//
// make release VERSION=vX.Y.Z REGISTRY=... runs it (docs/releasing.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/rejuv-dev/rejuv/config"
)

// options are the release's inputs.
type options struct {
	version, commit, registry, out, urlBase string
	imagePlatforms, pluginPlatforms         string
	created                                 time.Time
}

func main() {
	var o options
	flag.StringVar(&o.version, "version", "", "the release's version, vMAJOR.MINOR.PATCH: the chart's appVersion")
	flag.StringVar(&o.commit, "commit", "", "the commit stamped into the binaries")
	flag.StringVar(&o.registry, "registry", "", "the registry (host[:port][/path]) the images are pushed to and the install files pin")
	flag.StringVar(&o.out, "out", "", "the folder the release is written to (created; must be empty or absent)")
	flag.StringVar(&o.urlBase, "url-base", "https://github.com/rejuv-dev/rejuv/releases/download", "where the release's files are published, before /VERSION/FILE")
	flag.StringVar(&o.imagePlatforms, "image-platforms", "linux/amd64,linux/arm64", "os/arch pairs every image holds, comma separated")
	flag.StringVar(&o.pluginPlatforms, "plugin-platforms", "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64", "os/arch pairs the plugin is packaged for, comma separated")
	flag.Parse()
	o.created = time.Now().UTC().Truncate(time.Second)
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintf(os.Stderr, "release: %v\n", err)
		os.Exit(1)
	}
}

// releaseVersion is a release's version: vMAJOR.MINOR.PATCH, with a
// pre-release suffix if need be.
var releaseVersion = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

// check refuses inputs that would give a release nobody can install.
func (o options) check() error {
	if !releaseVersion.MatchString(o.version) {
		return fmt.Errorf("-version %q: want vMAJOR.MINOR.PATCH, such as v0.1.0", o.version)
	}
	chart, err := config.Version()
	if err != nil {
		return err
	}
	if chart != o.version {
		return fmt.Errorf("-version %s: the chart's appVersion (config/helm/rejuv/Chart.yaml) is %s; set it (and the chart's version) to the release's first, then make manifests", o.version, chart)
	}
	switch {
	case o.commit == "":
		return errors.New("-commit: empty; the binaries must say what they were built from")
	case o.registry == "":
		return errors.New("-registry: empty; the install files and the chart pin the images in a registry")
	case o.out == "":
		return errors.New("-out: empty")
	case !strings.HasPrefix(o.urlBase, "https://") && !strings.HasPrefix(o.urlBase, "http://"):
		return fmt.Errorf("-url-base %q: want an http(s) URL", o.urlBase)
	}
	entries, err := os.ReadDir(o.out)
	if err == nil && len(entries) > 0 {
		return fmt.Errorf("-out %s: not empty; a release is written into a folder of its own", o.out)
	}
	return nil
}

// url is where the release publishes file.
func (o options) url(file string) string {
	return strings.TrimSuffix(o.urlBase, "/") + "/" + o.version + "/" + file
}

func run(ctx context.Context, o options) error {
	if err := o.check(); err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	imgs, err := buildImages(ctx, o)
	if err != nil {
		return err
	}
	if err := writeInstallFiles(o, imgs); err != nil {
		return err
	}
	chart, err := packageChart(o, imgs)
	if err != nil {
		return err
	}
	plugins, err := packagePlugin(ctx, o)
	if err != nil {
		return err
	}
	sboms, err := writeSBOMs(ctx, o, imgs, plugins)
	if err != nil {
		return err
	}
	changed, err := changesSince(ctx, o.commit)
	if err != nil {
		return err
	}
	if err := writeNotes(o, notes{Images: imgs, Chart: chart, Plugins: plugins, SBOMs: sboms, Changes: changed}); err != nil {
		return err
	}
	return writeChecksums(o.out)
}
