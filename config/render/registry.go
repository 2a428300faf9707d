package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rejuv-dev/rejuv/config/installfile"
)

const installForHeader = `# Rejuv, everything in one file, with its images from %[1]s%[3]s:
#   kubectl apply --server-side -f %[2]s
# Generated from config/default by make install-file REGISTRY=%[1]s.
`

// install is what make deploy and make install-file ask of render.
type install struct {
	// registry, when set, is where Rejuv's images are pulled from.
	registry string
	// runtime and components name the kustomize components added to
	// config/default (installfile.Components).
	runtime, components string
	// overlay, when set, is the folder the kustomization is written to
	// (make deploy); otherwise the single install file is written to out.
	overlay, out string
}

// writeInstall writes config/default with the components and, for a
// registry, its images renamed into it: as a kustomization into
// i.overlay, or built, as the single install file i.out.
func writeInstall(i install) error {
	components, err := installfile.Components("config", i.runtime, i.components)
	if err != nil {
		return err
	}
	o := installfile.Overlay{Base: filepath.Join("config", "default"), Components: components}
	if i.registry != "" {
		if o.Images, err = installfile.InRegistry(i.registry, nil); err != nil {
			return fmt.Errorf("-registry: %w", err)
		}
	}
	if i.overlay != "" {
		return o.Write(i.overlay)
	}
	data, err := o.Build()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(i.out), 0o755); err != nil {
		return err
	}
	with := ""
	if len(components) > 0 {
		with = " and the components " + strings.Join(components, ", ")
	}
	return os.WriteFile(i.out, append(fmt.Appendf(nil, installForHeader, i.registry, i.out, with), data...), 0o644)
}
