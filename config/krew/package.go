package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

type options struct {
	version, commit, out, urlBase string
	platforms                     [][2]string
}

func splitPlatforms(s string) [][2]string {
	var out [][2]string
	for p := range strings.SplitSeq(s, ",") {
		osName, arch, _ := strings.Cut(strings.TrimSpace(p), "/")
		out = append(out, [2]string{osName, arch})
	}
	return out
}

var semver = regexp.MustCompile(`^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?$`)

// completeScript is what kubectl (1.26 and later) runs to complete the
// plugin's arguments: kubectl_complete-rejuv on PATH.
const completeScript = `#!/bin/sh
# kubectl runs this to complete the arguments of kubectl rejuv.
exec kubectl-rejuv __complete "$@"
`

// manifest is krew's plugin manifest (krew.googlecontainertools.github.com/v1alpha2).
type manifest struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec pluginSpec `json:"spec"`
}

type pluginSpec struct {
	Version          string     `json:"version"`
	Homepage         string     `json:"homepage"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description"`
	Caveats          string     `json:"caveats,omitempty"`
	Platforms        []platform `json:"platforms"`
}

type platform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string     `json:"uri"`
	Sha256 string     `json:"sha256"`
	Bin    string     `json:"bin"`
	Files  []fileSpec `json:"files"`
}

type fileSpec struct {
	From string `json:"from"`
	To   string `json:"to"`
}

const description = `Restart containers in place through Rejuv: one pod through a
ContainerRecreateRequest, or a workload's pods in rolling batches that honour
maxUnavailable and PodDisruptionBudgets, rolled out by the Rejuv manager in
the cluster. Shows what is being recreated and why, explains which
RecreatePolicies select a pod, and tests policies against live or saved pods
before they are applied.`

func run(o options) error {
	if !semver.MatchString(o.version) {
		return fmt.Errorf("-version %q: a semantic version with its v, such as v0.1.0", o.version)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	m := manifest{APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin"}
	m.Metadata.Name = "rejuv"
	m.Spec = pluginSpec{
		Version: o.version, Homepage: "https://github.com/rejuv-dev/rejuv",
		ShortDescription: "Restart containers in place, roll restarts out, test policies",
		Description:      description,
		Caveats: `The restarts are carried out by Rejuv, which must be installed in the
cluster (see the homepage). For completion: kubectl rejuv completion --help.`,
	}
	for _, p := range o.platforms {
		name := fmt.Sprintf("kubectl-rejuv_%s_%s_%s.tar.gz", o.version, p[0], p[1])
		sum, err := archive(o, p[0], p[1], filepath.Join(o.out, name))
		if err != nil {
			return fmt.Errorf("package %s/%s: %w", p[0], p[1], err)
		}
		pl := platform{URI: o.urlBase + "/" + o.version + "/" + name, Sha256: sum, Bin: "kubectl-rejuv",
			Files: []fileSpec{{From: "kubectl-rejuv", To: "."}, {From: "kubectl_complete-rejuv", To: "."}}}
		pl.Selector.MatchLabels = map[string]string{"os": p[0], "arch": p[1]}
		m.Spec.Platforms = append(m.Spec.Platforms, pl)
	}
	b, err := yaml.Marshal(m)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(o.out, "rejuv.yaml"), b, 0o644)
}

// archive builds the plugin for goos/goarch and writes it with the
// completion script as a .tar.gz; it returns the archive's sha256.
func archive(o options, goos, goarch, path string) (string, error) {
	dir, err := os.MkdirTemp("", "krew-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "kubectl-rejuv")
	ldflags := "-s -w -X github.com/rejuv-dev/rejuv/cmd/internal/buildinfo.Version=" + o.version
	if o.commit != "" {
		ldflags += " -X github.com/rejuv-dev/rejuv/cmd/internal/buildinfo.Commit=" + o.commit
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", ldflags, "-o", bin, "github.com/rejuv-dev/rejuv/cmd/kubectl-rejuv")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, f := range []struct {
		name string
		body []byte
	}{{"kubectl-rejuv", binary}, {"kubectl_complete-rejuv", []byte(completeScript)}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			return "", err
		}
		if _, err := tw.Write(f.body); err != nil {
			return "", err
		}
	}
	if err := errors.Join(tw.Close(), gz.Close()); err != nil {
		return "", err
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", err
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:]), nil
}
