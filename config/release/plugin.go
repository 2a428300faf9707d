package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// packagePlugin packages kubectl-rejuv for krew (config/krew) into the
// release, its manifest pointing at the release's URLs, and returns the
// archives' file names.
func packagePlugin(ctx context.Context, o options) ([]string, error) {
	cmd := exec.CommandContext(ctx, "go", "run", "./config/krew", "-version", o.version, "-commit", o.commit,
		"-out", o.out, "-url-base", o.urlBase, "-platforms", o.pluginPlatforms)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("package the plugin (config/krew): %w", err)
	}
	// The release's folder was empty (options.check): what is there now,
	// config/krew wrote.
	written, err := filepath.Glob(filepath.Join(o.out, "kubectl-rejuv_*.tar.gz"))
	if err != nil {
		return nil, err
	}
	if len(written) == 0 {
		return nil, fmt.Errorf("package the plugin (config/krew): no archive written in %s", o.out)
	}
	var files []string
	for _, f := range written {
		files = append(files, filepath.Base(f))
	}
	sort.Strings(files)
	return files, nil
}
