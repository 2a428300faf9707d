package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// KubeBinaries are the Kubernetes programs the cluster runs, and kubectl,
// of the same version, for the install paths users take (make deploy).
var KubeBinaries = []string{"kube-apiserver", "kubelet", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubectl"}

// KubeBinDir is where the binaries of cfg's Kubernetes version are: the
// prebuilt directory from Tools.KubeBinDir, or the version's cache folder.
func (c Config) KubeBinDir() string {
	if c.Tools.KubeBinDir != "" {
		return c.Tools.KubeBinDir
	}
	return filepath.Join(c.CacheDir, "kubernetes", c.KubernetesVersion)
}

// KubeBinary is the path of one Kubernetes program.
func (c Config) KubeBinary(name string) string {
	return filepath.Join(c.KubeBinDir(), name)
}

// EnsureKubeBinaries builds the Kubernetes binaries of cfg's version from the
// Go module proxy when they are not cached yet, through the separate module in
// KubeBuildDir. A second call finds them and builds nothing. Concurrent calls
// (parallel test packages) wait for each other.
func EnsureKubeBinaries(ctx context.Context, cfg Config) error {
	dir := cfg.KubeBinDir()
	if cfg.Tools.KubeBinDir != "" {
		var missing []string
		for _, b := range KubeBinaries {
			if !isExecutable(filepath.Join(dir, b)) {
				missing = append(missing, b)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("REJUV_KUBE_BIN_DIR=%s lacks %s; unset it to build them from the Go module proxy", dir, strings.Join(missing, ", "))
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create Kubernetes binary cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, ".lock"))
	if err != nil {
		return fmt.Errorf("lock Kubernetes binary cache %s: %w", dir, err)
	}
	defer unlock()
	var missing []string
	for _, b := range KubeBinaries {
		if !isExecutable(filepath.Join(dir, b)) {
			missing = append(missing, b)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	start := time.Now()
	fmt.Fprintf(cfg.out(), "harness: building %s %s (cached afterwards in %s)\n", strings.Join(missing, ", "), cfg.KubernetesVersion, dir)
	if err := buildKubeBinaries(ctx, cfg, missing); err != nil {
		return err
	}
	fmt.Fprintf(cfg.out(), "harness: built %s in %s\n", strings.Join(missing, ", "), since(start))
	return nil
}

// buildKubeBinaries builds the named programs in one go build: the
// packages they share are compiled once and their links run side by side,
// where one build after another would link one at a time.
func buildKubeBinaries(ctx context.Context, cfg Config, names []string) error {
	tmp, err := os.MkdirTemp(cfg.KubeBinDir(), ".build-")
	if err != nil {
		return fmt.Errorf("create a build folder for the Kubernetes binaries: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	args := []string{"build", "-trimpath", "-ldflags", versionLDFlags(cfg.KubernetesVersion), "-o", tmp + string(filepath.Separator)}
	for _, name := range names {
		args = append(args, "k8s.io/kubernetes/cmd/"+name)
	}
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = cfg.KubeBuildDir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s %s in %s: %w\n%s", strings.Join(names, ", "), cfg.KubernetesVersion, cfg.KubeBuildDir, err, tail(string(b), 30))
	}
	for _, name := range names {
		if err := os.Rename(filepath.Join(tmp, name), cfg.KubeBinary(name)); err != nil {
			return fmt.Errorf("build %s: %w", name, err)
		}
	}
	return nil
}

// versionLDFlags stamps the version Kubernetes binaries report (the node's
// kubeletVersion, the apiserver's /version), as Kubernetes' own build does.
func versionLDFlags(version string) string {
	major, minor, _ := strings.Cut(strings.TrimPrefix(version, "v"), ".")
	minor, _, _ = strings.Cut(minor, ".")
	var flags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		flags = append(flags,
			"-X "+pkg+".gitVersion="+version,
			"-X "+pkg+".gitMajor="+major,
			"-X "+pkg+".gitMinor="+minor,
			"-X "+pkg+".gitTreeState=clean",
		)
	}
	return "-s -w " + strings.Join(flags, " ")
}

// goTool is the go command of the toolchain running the harness, so that a
// test and the build it triggers use one Go.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return "go"
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
