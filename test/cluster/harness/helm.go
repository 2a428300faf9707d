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

// helmVersionLine is the Makefile's pin, the one home of Helm's version.
var helmVersionLine = regexp.MustCompile(`(?m)^HELM_VERSION\s*\?=\s*(v\d+\.\d+\.\d+)\s*$`)

// helmVersion reads the Helm version the Makefile pins.
func helmVersion(makefile string) (string, error) {
	data, err := os.ReadFile(makefile)
	if err != nil {
		return "", fmt.Errorf("read Helm version: %w", err)
	}
	m := helmVersionLine.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("read Helm version: %s has no line HELM_VERSION ?= vX.Y.Z", makefile)
	}
	return string(m[1]), nil
}

// EnsureHelm builds Helm, of the version the Makefile's HELM_VERSION pins,
// from the Go module proxy into <cache>/tools/helm-<version>/helm (as make
// helm does) when it is not there yet, and returns the binary's path.
// Concurrent calls (parallel test packages) wait for each other.
func EnsureHelm(ctx context.Context) (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	version, err := helmVersion(filepath.Join(root, "Makefile"))
	if err != nil {
		return "", err
	}
	dir := filepath.Join(envOr(envCacheDir, filepath.Join(root, ".cache")), "tools", "helm-"+version)
	bin := filepath.Join(dir, "helm")
	if isExecutable(bin) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create Helm cache: %w", err)
	}
	unlock, err := lockFile(ctx, filepath.Join(dir, ".lock"))
	if err != nil {
		return "", fmt.Errorf("lock Helm cache %s: %w", dir, err)
	}
	defer unlock()
	if isExecutable(bin) {
		return bin, nil
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "harness: building helm %s (cached afterwards in %s)\n", version, dir)
	if err := buildHelm(ctx, version, bin); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "harness: built helm %s in %s\n", version, since(start))
	return bin, nil
}

// buildHelm installs Helm into a directory beside bin and renames it into
// place, so that a reader never finds half a binary.
func buildHelm(ctx context.Context, version, bin string) error {
	major, _, _ := strings.Cut(version, ".")
	module := "helm.sh/helm/" + major
	tmp, err := os.MkdirTemp(filepath.Dir(bin), ".build-")
	if err != nil {
		return fmt.Errorf("build helm %s: %w", version, err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, goTool(), "install", "-trimpath",
		"-ldflags", "-s -w -X "+module+"/internal/version.version="+version,
		module+"/cmd/helm@"+version)
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build helm %s: %w\n%s", version, err, tail(string(out), 30))
	}
	if err := os.Rename(filepath.Join(tmp, "helm"), bin); err != nil {
		return fmt.Errorf("build helm %s: %w", version, err)
	}
	return nil
}
