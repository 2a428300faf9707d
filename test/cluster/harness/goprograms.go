package harness

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// goProgram is a program the tests need besides the cluster's own, built
// in the newest Kubernetes's build module (ProgramsBuildDir), which pins
// its version:
// it shares most of its packages with Kubernetes (client-go, apimachinery,
// the API server's libraries), so building it in the same go build as the
// Kubernetes binaries compiles them once.
type goProgram struct {
	// name is the binary's name.
	name string
	// module is the Go module that the build module requires; main is
	// its main package.
	module, main string
	// ldflags are the linker flags beside -s -w, at the module's version.
	ldflags func(version string) string
}

// Helm, for the chart's install path.
var helm = goProgram{
	name: "helm", module: "helm.sh/helm/v4", main: "helm.sh/helm/v4/cmd/helm",
	ldflags: func(v string) string { return "-X helm.sh/helm/v4/internal/version.version=" + v },
}

// metricsServer serves the resource metrics API (metrics.k8s.io) that the
// manager samples the working set from.
var metricsServer = goProgram{
	name: "metrics-server", module: "sigs.k8s.io/metrics-server", main: "sigs.k8s.io/metrics-server/cmd/metrics-server",
	ldflags: func(v string) string { return "-X k8s.io/client-go/pkg/version.gitVersion=" + v },
}

// kwok plays the kubelets of simulated nodes, for the scale benchmark
// (make test runs it small).
var kwok = goProgram{
	name: "kwok", module: "sigs.k8s.io/kwok", main: "sigs.k8s.io/kwok/cmd/kwok",
	ldflags: func(v string) string { return "-X sigs.k8s.io/kwok/pkg/consts.Version=" + strings.TrimPrefix(v, "v") },
}

// krew, the kubectl plugin manager, installs the released plugin as a
// user does.
var krew = goProgram{
	name: "krew", module: "sigs.k8s.io/krew", main: "sigs.k8s.io/krew/cmd/krew",
	ldflags: func(v string) string { return "-X sigs.k8s.io/krew/internal/version.gitTag=" + v },
}

// goPrograms are the programs built beside the Kubernetes binaries.
var goPrograms = []goProgram{helm, metricsServer, kwok, krew}

// version reads the version of the program's module that the build module
// requires.
func (p goProgram) version(buildDir string) (string, error) {
	return requiredVersion(filepath.Join(buildDir, "go.mod"), p.module)
}

// pinnedProgram is a program at the version the build module requires,
// and where its binary is cached.
type pinnedProgram struct {
	goProgram
	version, bin string
}

func (p goProgram) pinned(cfg Config) (pinnedProgram, error) {
	version, err := p.version(cfg.ProgramsBuildDir)
	if err != nil {
		return pinnedProgram{}, err
	}
	return pinnedProgram{goProgram: p, version: version, bin: filepath.Join(cfg.CacheDir, "tools", p.name+"-"+version, p.name)}, nil
}

// EnsureHelm builds Helm, of the version test/cluster/kubebuild/go.mod
// requires, into <cache>/tools/helm-<version>/helm once, and returns its
// path.
func EnsureHelm(ctx context.Context) (string, error) { return ensure(ctx, helm) }

// EnsureMetricsServer builds metrics-server, of the version
// test/cluster/kubebuild/go.mod requires, into
// <cache>/tools/metrics-server-<version>/metrics-server once, and returns
// its path.
func EnsureMetricsServer(ctx context.Context) (string, error) { return ensure(ctx, metricsServer) }

// EnsureKwok builds kwok, of the version test/cluster/kubebuild/go.mod
// requires, into <cache>/tools/kwok-<version>/kwok once, and returns its
// path.
func EnsureKwok(ctx context.Context) (string, error) { return ensure(ctx, kwok) }

// EnsureKrew builds krew, of the version test/cluster/kubebuild/go.mod
// requires, into <cache>/tools/krew-<version>/krew once, and returns its
// path.
func EnsureKrew(ctx context.Context) (string, error) { return ensure(ctx, krew) }

// ensure returns the program's cached binary, building it alone when the
// Kubernetes build (EnsureKubeBinaries) did not build it already.
// Concurrent calls (parallel test packages) wait for each other.
func ensure(ctx context.Context, p goProgram) (string, error) {
	cfg, err := DefaultConfig()
	if err != nil {
		return "", err
	}
	pp, err := p.pinned(cfg)
	if err != nil {
		return "", err
	}
	if isExecutable(pp.bin) {
		return pp.bin, nil
	}
	unlock, err := lockProgram(ctx, pp.bin)
	if err != nil {
		return "", err
	}
	defer unlock()
	if isExecutable(pp.bin) {
		return pp.bin, nil
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "harness: building %s %s (cached afterwards in %s)\n", p.name, pp.version, filepath.Dir(pp.bin))
	if err := buildPrograms(ctx, cfg, cfg.ProgramsBuildDir, nil, []pinnedProgram{pp}); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "harness: built %s %s in %s\n", p.name, pp.version, since(start))
	return pp.bin, nil
}

// lockProgram creates the program's cache folder and locks it.
func lockProgram(ctx context.Context, bin string) (func(), error) {
	dir := filepath.Dir(bin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create the cache %s: %w", dir, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, ".lock"))
	if err != nil {
		return nil, fmt.Errorf("lock the cache %s: %w", dir, err)
	}
	return unlock, nil
}

// goBuild builds main packages in the build module in dir (bins maps each
// to where its binary goes), each linked with the -ldflags arguments that
// name it, into a folder of the cache, and moves each binary into place,
// so that a reader never finds half a binary.
func goBuild(ctx context.Context, cfg Config, dir string, ldflags []string, bins map[string]string) error {
	tmp, err := os.MkdirTemp(cfg.CacheDir, ".build-")
	if err != nil {
		return fmt.Errorf("create a build folder: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	args := []string{"build", "-trimpath"}
	for _, l := range ldflags {
		args = append(args, "-ldflags", l)
	}
	args = append(args, "-o", tmp+string(filepath.Separator))
	pkgs := slices.Sorted(maps.Keys(bins))
	args = append(args, pkgs...)
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s in %s: %w\n%s", strings.Join(pkgs, ", "), dir, err, tail(string(out), 30))
	}
	for _, pkg := range pkgs {
		if err := os.Rename(filepath.Join(tmp, path.Base(pkg)), bins[pkg]); err != nil {
			return fmt.Errorf("build %s: %w", pkg, err)
		}
	}
	return nil
}
