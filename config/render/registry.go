package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/kustomize/api/filters/imagetag"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/kio"
)

// images are the names config/ gives Rejuv's images.
var images = []string{"rejuv-healer", "rejuv-daemon"}

const installForHeader = `# Rejuv, everything in one file, with its images from %[1]s:
#   kubectl apply --server-side -f %[2]s
# Generated from config/default by make install-file REGISTRY=%[1]s.
`

// writeInstallFor writes the single install file of dir (config/default)
// to out, with Rejuv's images renamed into registry, as kustomize's
// images: override renames them.
func writeInstallFor(dir, registry, out string) error {
	registry = strings.TrimSuffix(registry, "/")
	var filters []kio.Filter
	for _, image := range images {
		repo, err := name.NewRepository(registry + "/" + image)
		if err != nil || !strings.Contains(registry, ".") && !strings.Contains(registry, ":") && registry != "localhost" {
			return fmt.Errorf("-registry %q: want a registry's host, with a port and a path if need be (registry.example.com/team)", registry)
		}
		filters = append(filters, imagetag.LegacyFilter{ImageTag: types.Image{Name: image, NewName: repo.String()}})
	}
	data, err := build(dir, filters...)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, append([]byte(fmt.Sprintf(installForHeader, registry, out)), data...), 0o644)
}
