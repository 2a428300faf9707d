package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// goProgram is a program the tests need that is built from its Go module,
// at the version the Makefile pins.
type goProgram struct {
	// name is the binary's name.
	name string
	// makeVar is the Makefile variable that pins the version, the one
	// home of it.
	makeVar string
	// pkg is the main package at a version; ldflags the linker flags
	// beside -s -w.
	pkg, ldflags func(version string) string
}

// Helm, for the chart's install path.
var helm = goProgram{
	name: "helm", makeVar: "HELM_VERSION",
	pkg: func(v string) string { return helmModule(v) + "/cmd/helm@" + v },
	ldflags: func(v string) string {
		return "-X " + helmModule(v) + "/internal/version.version=" + v
	},
}

func helmModule(version string) string {
	major, _, _ := strings.Cut(version, ".")
	return "helm.sh/helm/" + major
}

// metricsServer serves the resource metrics API (metrics.k8s.io) that the
// manager samples the working set from.
var metricsServer = goProgram{
	name: "metrics-server", makeVar: "METRICS_SERVER_VERSION",
	pkg: func(v string) string { return "sigs.k8s.io/metrics-server/cmd/metrics-server@" + v },
	ldflags: func(v string) string {
		return "-X k8s.io/component-base/version.gitVersion=" + v
	},
}

// version reads the version the Makefile pins.
func (p goProgram) version(makefile string) (string, error) {
	data, err := os.ReadFile(makefile)
	if err != nil {
		return "", fmt.Errorf("read the %s version: %w", p.name, err)
	}
	line := regexp.MustCompile(`(?m)^` + p.makeVar + `\s*\?=\s*(v\d+\.\d+\.\d+)\s*$`)
	m := line.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("read the %s version: %s has no line %s ?= vX.Y.Z", p.name, makefile, p.makeVar)
	}
	return string(m[1]), nil
}

// EnsureHelm builds Helm, of the version the Makefile's HELM_VERSION pins,
// into <cache>/tools/helm-<version>/helm once, and returns its path.
func EnsureHelm(ctx context.Context) (string, error) { return ensure(ctx, helm) }

// EnsureMetricsServer builds metrics-server, of the version the Makefile's
// METRICS_SERVER_VERSION pins, into
// <cache>/tools/metrics-server-<version>/metrics-server once, and returns
// its path.
func EnsureMetricsServer(ctx context.Context) (string, error) { return ensure(ctx, metricsServer) }

// ensure builds p from the Go module proxy into the cache when it is not
// there yet, and returns the binary's path. Concurrent calls (parallel
// test packages) wait for each other.
func ensure(ctx context.Context, p goProgram) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	version, err := p.version(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	dir := filepath.Join(envOr(envCacheDir, filepath.Join(root, ".cache")), "tools", p.name+"-"+version)
	bin := filepath.Join(dir, p.name)
	if isExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create the %s cache: %w", p.name, err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("lock the %s cache %s: %w", p.name, dir, err)
	}
	defer unlock()
	if isExecutable(bin) {
		return bin, nil
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "harness: building %s %s (cached afterwards in %s)\n", p.name, version, dir)
	if err := p.build(ctx, version, bin); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "harness: built %s %s in %s\n", p.name, version, since(start))
	return bin, nil
}

// build installs the program into a directory beside bin and renames it
// into place, so that a reader never finds half a binary.
func (p goProgram) build(ctx context.Context, version, bin string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(bin), ".build-")
	if err != nil {
		return fmt.Errorf("build %s %s: %w", p.name, version, err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, goTool(), "install", "-trimpath", "-ldflags", "-s -w "+p.ldflags(version), p.pkg(version))
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build %s %s: %w\n%s", p.name, version, err, tail(string(out), 30))
	}
	if err := os.Rename(filepath.Join(tmp, p.name), bin); err != nil {
		return fmt.Errorf("build %s %s: %w", p.name, version, err)
	}
	return nil
}
