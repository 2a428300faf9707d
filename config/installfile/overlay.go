package installfile

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// Overlay is a kustomization of Base (config/default) with Components
// (see Components) and Rejuv's images renamed (InRegistry): what make
// deploy applies, and what make install-file builds into one file.
type Overlay struct {
	Base       string
	Components []string
	Images     []types.Image
}

// kustomization is what Write writes, in this order.
type kustomization struct {
	Resources  []string      `json:"resources"`
	Components []string      `json:"components,omitempty"`
	Images     []types.Image `json:"images,omitempty"`
}

// overlayHeader opens the kustomization.yaml Write writes.
const overlayHeader = "# %s with the components and images make deploy or make install-file was given;\n# written by them (config/render), rewritten at each run.\n"

// Write writes the overlay's kustomization.yaml into dir, naming Base and
// the components by their paths from dir, as kustomize wants them.
func (o Overlay) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	from := func(path string) (string, error) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", err
		}
		absDir, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		rel, err := filepath.Rel(absDir, abs)
		return filepath.ToSlash(rel), err
	}
	base, err := from(o.Base)
	if err != nil {
		return fmt.Errorf("overlay of %s: %w", o.Base, err)
	}
	k := kustomization{Resources: []string{base}, Images: o.Images}
	for _, c := range o.Components {
		rel, err := from(c)
		if err != nil {
			return fmt.Errorf("overlay of %s: component %s: %w", o.Base, c, err)
		}
		k.Components = append(k.Components, rel)
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "kustomization.yaml"), append(fmt.Appendf(nil, overlayHeader, o.Base), data...), 0o644)
}

// Build writes the overlay into a folder of its own and builds it (Build).
func (o Overlay) Build() ([]byte, error) {
	dir, err := os.MkdirTemp("", "rejuv-overlay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := o.Write(dir); err != nil {
		return nil, err
	}
	return Build(dir)
}
