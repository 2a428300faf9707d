package harness

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// The cluster's registry is an OCI registry on loopback (the command
// test/cluster/registry), started before the node's components: the images
// the tests build can be pushed there and pulled from it as from any
// registry. Its blobs are kept in Dir/registry; its manifests in memory.

// Registry is the address (host:port) of the cluster's registry.
func (c Config) Registry() string {
	return fmt.Sprintf("127.0.0.1:%d", c.Ports.Registry)
}

// registryBinary is where preflight builds the registry command.
func (c Config) registryBinary() string { return c.path("bin", "registry") }

// buildRegistry builds the registry command from this module (go build
// caches it: a second start costs a link at most).
func buildRegistry(ctx context.Context, cfg Config) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", cfg.registryBinary(), "./test/cluster/registry")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build the registry: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// registryStep starts the registry, ready once it answers the
// distribution API's version check.
func registryStep(cfg Config) step {
	return step{
		spec: spec{name: "registry", path: cfg.registryBinary(), args: []string{
			"-addr", cfg.Registry(),
			"-blobs", cfg.path("registry"),
		}},
		ready: httpCheck(plainClient(), "http://"+cfg.Registry()+"/v2/", ""),
	}
}
