package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// The container runtimes a node can run. Kubernetes 1.36 and later support
// containerd 2 alone; Debian's containerd 1.6 serves the versions before.
const (
	// RuntimeContainerd1 is Debian's containerd package, found as a tool
	// (REJUV_RUNTIME=containerd1).
	RuntimeContainerd1 = "containerd1"
	// RuntimeContainerd2, the default, is containerd 2, built from its Go
	// module (RuntimeBuildDir pins the version) into the cache.
	RuntimeContainerd2 = "containerd2"

	// envRuntime chooses the node's runtime.
	envRuntime = "REJUV_RUNTIME"
	// containerdModule is containerd 2's Go module.
	containerdModule = "github.com/containerd/containerd/v2"
)

// containerdPrograms are containerd 2's programs the node needs: the
// daemon, the runc shim it starts through PATH, and ctr, with which the
// harness imports images.
var containerdPrograms = []string{"containerd", "containerd-shim-runc-v2", "ctr"}

// useRuntime points cfg's tools at the programs of the runtime it
// chooses: for containerd 2, those ensureRuntime builds into
// <cache>/containerd-<version>. Nothing is built here.
func (c *Config) useRuntime() error {
	if c.Runtime != RuntimeContainerd2 {
		return nil
	}
	_, dir, err := c.containerd2()
	if err != nil {
		return err
	}
	c.Tools.Containerd = filepath.Join(dir, "containerd")
	c.Tools.Shim = filepath.Join(dir, "containerd-shim-runc-v2")
	c.Tools.Ctr = filepath.Join(dir, "ctr")
	return nil
}

// containerd2 is the version of containerd 2 RuntimeBuildDir requires,
// and where its programs are cached.
func (c Config) containerd2() (version, dir string, err error) {
	version, err = requiredVersion(filepath.Join(c.RuntimeBuildDir, "go.mod"), containerdModule)
	if err != nil {
		return "", "", err
	}
	return version, filepath.Join(c.CacheDir, "containerd-"+version), nil
}

// ensureRuntime builds containerd 2's programs, when cfg chooses it, from
// the Go module proxy once; concurrent calls wait for each other.
func ensureRuntime(ctx context.Context, cfg Config) error {
	if cfg.Runtime != RuntimeContainerd2 {
		return nil
	}
	version, dir, err := cfg.containerd2()
	if err != nil {
		return err
	}
	unlock, err := lockProgram(ctx, filepath.Join(dir, "containerd"))
	if err != nil {
		return err
	}
	defer unlock()
	bins := map[string]string{}
	for _, name := range containerdPrograms {
		if bin := filepath.Join(dir, name); !isExecutable(bin) {
			bins[containerdModule+"/cmd/"+name] = bin
		}
	}
	if len(bins) == 0 {
		return nil
	}
	start := time.Now()
	fmt.Fprintf(cfg.out(), "harness: building containerd %s (cached afterwards in %s)\n", version, dir)
	if err := goBuild(ctx, cfg, cfg.RuntimeBuildDir, []string{"-s -w -X " + containerdModule + "/version.Version=" + version}, bins); err != nil {
		return err
	}
	fmt.Fprintf(cfg.out(), "harness: built containerd %s in %s\n", version, since(start))
	return nil
}
