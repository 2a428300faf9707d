package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rejuv-dev/rejuv/config/installfile"
)

const installForHeader = `# Rejuv, everything in one file, with its images from %[1]s:
#   kubectl apply --server-side -f %[2]s
# Generated from config/default by make install-file REGISTRY=%[1]s.
`

// writeInstallFor writes the single install file of dir (config/default)
// to out, with Rejuv's images renamed into registry.
func writeInstallFor(dir, registry, out string) error {
	overrides, err := installfile.InRegistry(registry, nil)
	if err != nil {
		return fmt.Errorf("-registry: %w", err)
	}
	data, err := installfile.Build(dir, overrides...)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	return os.WriteFile(out, append(fmt.Appendf(nil, installForHeader, registry, out), data...), 0o644)
}
