package installfile

import (
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/kustomize/api/filters/imagetag"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Images are the names config/ gives Rejuv's images.
var Images = []string{"rejuv-healer", "rejuv-daemon"}

// Resources are the objects kustomize makes of dir, as kubectl apply -k
// makes them.
func Resources(dir string) (resmap.ResMap, error) {
	opts := krusty.MakeDefaultOptions()
	// The kustomization's sortOptions decide the order, as with kubectl.
	opts.Reorder = krusty.ReorderOptionUnspecified
	resources, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return resources, nil
}

// Build runs kustomize on dir as kubectl apply -k does (Resources), then
// applies overrides to the images of the objects it made.
func Build(dir string, overrides ...types.Image) ([]byte, error) {
	resources, err := Resources(dir)
	if err != nil {
		return nil, err
	}
	for _, o := range overrides {
		if err := resources.ApplyFilter(imagetag.LegacyFilter{ImageTag: o}); err != nil {
			return nil, fmt.Errorf("kustomize build %s: image %s: %w", dir, o.Name, err)
		}
	}
	out, err := resources.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return out, nil
}

// InRegistry are the overrides that rename Rejuv's images into registry (a
// host, with a port and a path if need be) and, for an image digests names
// (by its name in Images), pin it by that digest (sha256:...).
func InRegistry(registry string, digests map[string]string) ([]types.Image, error) {
	registry = strings.TrimSuffix(registry, "/")
	var overrides []types.Image
	for _, image := range Images {
		repo, err := name.NewRepository(registry + "/" + image)
		if err != nil || !strings.ContainsAny(registry, ".:") && registry != "localhost" {
			return nil, fmt.Errorf("registry %q: want a registry's host, with a port and a path if need be (registry.example.com/team)", registry)
		}
		o := types.Image{Name: image, NewName: repo.String()}
		if d, ok := digests[image]; ok {
			if _, err := name.NewDigest(repo.String() + "@" + d); err != nil {
				return nil, fmt.Errorf("image %s: digest %q: %w", image, d, err)
			}
			o.Digest = d
		}
		overrides = append(overrides, o)
	}
	return overrides, nil
}
