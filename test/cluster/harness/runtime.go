package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

// The container runtimes a node can run, each built from its Go module
// into the cache. Kubernetes 1.36 and later support containerd 2 alone;
// containerd 1.7 serves the versions before, down to the oldest Rejuv
// supports (REJUV_KUBERNETES=oldest).
const (
	// RuntimeContainerd1 is containerd 1.7, built from
	// github.com/containerd/containerd in test/cluster/runtimebuild1
	// (REJUV_RUNTIME=containerd1; the default of the oldest Kubernetes).
	RuntimeContainerd1 = "containerd1"
	// RuntimeContainerd2, the default, is containerd 2, built from
	// github.com/containerd/containerd/v2 in test/cluster/runtimebuild.
	RuntimeContainerd2 = "containerd2"

	// envRuntime chooses the node's runtime.
	envRuntime = "REJUV_RUNTIME"
)

// runtimeBuilds are where each runtime's module is pinned, and its
// module's path.
var runtimeBuilds = map[string]struct{ dir, module string }{
	RuntimeContainerd1: {"runtimebuild1", "github.com/containerd/containerd"},
	RuntimeContainerd2: {"runtimebuild", "github.com/containerd/containerd/v2"},
}

// containerdPrograms are containerd's programs the node needs: the
// daemon, the runc shim it starts through PATH, and ctr, with which the
// harness imports images.
var containerdPrograms = []string{"containerd", "containerd-shim-runc-v2", "ctr"}

// useRuntime points cfg at the build module of the runtime it chooses,
// and its tools at that runtime's programs, those ensureRuntime builds
// into <cache>/containerd-<version>. Nothing is built here.
func (c *Config) useRuntime(clusterDir string) error {
	b, ok := runtimeBuilds[c.Runtime]
	if !ok {
		return nil // validate names it
	}
	c.RuntimeBuildDir = filepath.Join(clusterDir, b.dir)
	_, dir, err := c.containerd()
	if err != nil {
		return err
	}
	c.Tools.Containerd = filepath.Join(dir, "containerd")
	c.Tools.Shim = filepath.Join(dir, "containerd-shim-runc-v2")
	c.Tools.Ctr = filepath.Join(dir, "ctr")
	return nil
}

// containerd is the version of containerd that RuntimeBuildDir requires,
// and where its programs are cached.
func (c Config) containerd() (version, dir string, err error) {
	version, err = requiredVersion(filepath.Join(c.RuntimeBuildDir, "go.mod"), runtimeBuilds[c.Runtime].module)
	if err != nil {
		return "", "", err
	}
	return version, filepath.Join(c.CacheDir, "containerd-"+version), nil
}

// ensureRuntime builds containerd's programs from the Go module proxy
// once; concurrent calls wait for each other.
func ensureRuntime(ctx context.Context, cfg Config) error {
	module := runtimeBuilds[cfg.Runtime].module
	version, dir, err := cfg.containerd()
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
			bins[module+"/cmd/"+name] = bin
		}
	}
	if len(bins) == 0 {
		return nil
	}
	start := time.Now()
	fmt.Fprintf(cfg.out(), "harness: building containerd %s (cached afterwards in %s)\n", version, dir)
	if err := goBuild(ctx, cfg, cfg.RuntimeBuildDir, []string{"-s -w -X " + module + "/version.Version=" + version}, bins); err != nil {
		return err
	}
	fmt.Fprintf(cfg.out(), "harness: built containerd %s in %s\n", version, since(start))
	return nil
}
