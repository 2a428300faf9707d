package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// Build builds what cfg's cluster runs and the Go module proxy provides,
// its runtime and Kubernetes binaries, into the cache when they are not
// there yet, and starts nothing: a build beside other work, ahead of Up.
func Build(ctx context.Context, cfg Config) error {
	if err := ensureRuntime(ctx, cfg); err != nil {
		return err
	}
	return EnsureKubeBinaries(ctx, cfg)
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
	// The programs built beside the newest Kubernetes go into the same
	// build, which compiles their shared packages once.
	var programs []pinnedProgram
	for _, p := range goPrograms {
		if cfg.ProgramsBuildDir != cfg.KubeBuildDir {
			break
		}
		pp, err := p.pinned(cfg)
		if err != nil {
			return err
		}
		if isExecutable(pp.bin) {
			continue
		}
		unlockProgram, err := lockProgram(ctx, pp.bin)
		if err != nil {
			return err
		}
		defer unlockProgram()
		if !isExecutable(pp.bin) {
			programs = append(programs, pp)
		}
	}
	names := slices.Clone(missing)
	for _, p := range programs {
		names = append(names, p.name)
	}
	start := time.Now()
	fmt.Fprintf(cfg.out(), "harness: building %s in one go build (Kubernetes %s; cached afterwards in %s)\n", strings.Join(names, ", "), cfg.KubernetesVersion, cfg.CacheDir)
	if err := buildPrograms(ctx, cfg, cfg.KubeBuildDir, missing, programs); err != nil {
		return err
	}
	fmt.Fprintf(cfg.out(), "harness: built %s in %s\n", strings.Join(names, ", "), since(start))
	return nil
}

// buildPrograms builds, in the build module dir, the Kubernetes programs
// named and the programs built beside them in one go build: the packages
// they share are compiled once and their links run side by side, where
// one build after another would link one at a time.
func buildPrograms(ctx context.Context, cfg Config, dir string, kube []string, programs []pinnedProgram) error {
	ldflags := []string{versionLDFlags(cfg.KubernetesVersion)}
	bins := map[string]string{}
	for _, name := range kube {
		bins["k8s.io/kubernetes/cmd/"+name] = cfg.KubeBinary(name)
	}
	for _, p := range programs {
		// A later -ldflags naming a package wins over the first for it.
		ldflags = append(ldflags, p.main+"=-s -w "+p.ldflags(p.version))
		bins[p.main] = p.bin
	}
	return goBuild(ctx, cfg, dir, ldflags, bins)
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
