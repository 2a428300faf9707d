// Command render writes the install files made from config/: install.yaml
// (config/default built by kustomize, as `kubectl apply -k` would apply
// it) and what the Helm chart takes over from the generated manifests.
// make manifests runs it; make verify fails when its output is stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

func main() {
	if err := run("config"); err != nil {
		fmt.Fprintf(os.Stderr, "render: %v\n", err)
		os.Exit(1)
	}
}

const installHeader = `# Rejuv, everything in one file: kubectl apply -f config/install.yaml
# Generated from config/default by make manifests; do not edit.
`

func run(configDir string) error {
	out, err := build(filepath.Join(configDir, "default"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(configDir, "install.yaml"), append([]byte(installHeader), out...), 0o644)
}

// build runs kustomize on dir as kubectl apply -k does.
func build(dir string) ([]byte, error) {
	opts := krusty.MakeDefaultOptions()
	// The kustomization's sortOptions decide the order, as with kubectl.
	opts.Reorder = krusty.ReorderOptionUnspecified
	resources, err := krusty.MakeKustomizer(opts).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	out, err := resources.AsYaml()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	return out, nil
}
