// Command render writes the install files made from config/: install.yaml
// (config/default built by kustomize, as `kubectl apply -k` would apply
// it), prometheus/prometheusrule.yaml (the alert rules as a
// PrometheusRule), grafana/ (the dashboards of config/dashboards, as files
// and as a ConfigMap) and, in helm/rejuv/files, the manifests the Helm
// chart's templates read. make manifests runs it; make verify fails when its output is stale.
//
// With -registry R it writes only the single install file, to -o, with
// Rejuv's images pulled from R (R/rejuv-healer, R/rejuv-daemon, tagged
// with Rejuv's version): the file for a cluster whose nodes pull from R,
// as make install-file REGISTRY=R writes it. With -overlay DIR it writes
// only the kustomization make deploy applies, into DIR: config/default,
// with its images from -registry when set. Either adds the kustomize
// components -runtime and -components name (installfile.Components).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/config/dashboards"
	"github.com/rejuv-dev/rejuv/config/installfile"
)

func main() {
	registry := flag.String("registry", "", "Rejuv's images from this registry (host[:port][/path]); without -overlay, write only the install file, to -o")
	out := flag.String("o", "bin/install.yaml", "where -registry writes the install file")
	overlay := flag.String("overlay", "", "write only the kustomization make deploy applies, into this folder (Rejuv's images from -registry when set)")
	runtime := flag.String("runtime", "", "with -registry or -overlay: the nodes' container runtime, containerd (config/default's), crio, k3s or cri-dockerd, whose component config/components/runtime-RUNTIME is added")
	components := flag.String("components", "", "with -registry or -overlay: more kustomize components, separated by spaces or commas, each a folder of config/components (monitoring, image-pull-secret, ...) or one of your own")
	flag.Parse()
	var err error
	switch {
	case *overlay != "" || *registry != "":
		err = writeInstall(install{registry: *registry, runtime: *runtime, components: *components, overlay: *overlay, out: *out})
	case *runtime != "" || *components != "":
		err = fmt.Errorf("-runtime and -components go with -registry or -overlay")
	default:
		err = run("config")
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "render: %v\n", err)
		os.Exit(1)
	}
}

const installHeader = `# Rejuv, everything in one file: kubectl apply -f config/install.yaml
# Generated from config/default by make manifests; do not edit.
`

func run(configDir string) error {
	out, err := installfile.Build(filepath.Join(configDir, "default"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(configDir, "install.yaml"), append([]byte(installHeader), out...), 0o644); err != nil {
		return err
	}
	if err := writePrometheusRule(configDir); err != nil {
		return err
	}
	boards, err := dashboards.All()
	if err != nil {
		return err
	}
	if err := writeDashboards(configDir, boards); err != nil {
		return err
	}
	return writeChartFiles(configDir, boards)
}

// chartFiles is where the Helm chart finds config's manifests, a folder for
// each of config/default's (files/rbac holds config/rbac's).
const chartFiles = "helm/rejuv/files"

// writeChartFiles fills chartFiles afresh, so that a manifest removed from
// config/ leaves the chart too. A folder whose kustomization only lists
// files has them copied as they are, comments and all; one that also
// patches them (config/crd: the CRR's conversion webhook) is built, a
// file per object. The alert rules and the dashboards (boards) join them,
// and files/openkruise (writeOpenKruiseFiles).
func writeChartFiles(configDir string, boards []dashboards.Dashboard) error {
	defaultDir := filepath.Join(configDir, "default")
	folders, err := kustomization(defaultDir)
	if err != nil {
		return err
	}
	out := filepath.Join(configDir, chartFiles)
	if err := os.RemoveAll(out); err != nil {
		return fmt.Errorf("clear %s: %w", out, err)
	}
	for _, folder := range folders.Resources {
		src := filepath.Join(defaultDir, folder)
		dst := filepath.Join(out, filepath.Base(src))
		k, err := kustomization(src)
		if err != nil {
			return err
		}
		if k.onlyLists {
			err = copyResources(configDir, src, dst, k.Resources)
		} else {
			err = writeBuilt(configDir, src, dst)
		}
		if err != nil {
			return err
		}
	}
	// The alert rules, which the chart wraps in a PrometheusRule, and the
	// dashboards, which it puts in a ConfigMap.
	if err := copyResources(configDir, filepath.Join(configDir, "prometheus"), filepath.Join(out, "prometheus"), []string{"rules.yaml"}); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "grafana"), 0o755); err != nil {
		return err
	}
	for _, d := range boards {
		if err := os.WriteFile(filepath.Join(out, "grafana", d.File), d.JSON, 0o644); err != nil {
			return err
		}
	}
	return writeOpenKruiseFiles(configDir, out)
}

// kustomizationFile is what writeChartFiles reads of a kustomization.yaml:
// its resources and name prefix, and whether it does more than list
// resources.
type kustomizationFile struct {
	Resources  []string
	NamePrefix string
	onlyLists  bool
}

func kustomization(dir string) (kustomizationFile, error) {
	path := filepath.Join(dir, "kustomization.yaml")
	data, err := os.ReadFile(path)
	if err != nil {
		return kustomizationFile{}, err
	}
	var fields map[string]json.RawMessage
	if err := yaml.Unmarshal(data, &fields); err != nil {
		return kustomizationFile{}, fmt.Errorf("read %s: %w", path, err)
	}
	k := kustomizationFile{onlyLists: true}
	for field, value := range fields {
		switch field {
		case "apiVersion", "kind":
		case "resources":
			if err := json.Unmarshal(value, &k.Resources); err != nil {
				return kustomizationFile{}, fmt.Errorf("read %s: resources: %w", path, err)
			}
		case "namePrefix":
			k.onlyLists = false
			if err := json.Unmarshal(value, &k.NamePrefix); err != nil {
				return kustomizationFile{}, fmt.Errorf("read %s: namePrefix: %w", path, err)
			}
		default:
			k.onlyLists = false
		}
	}
	return k, nil
}

func copyResources(configDir, src, dst string, files []string) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			return fmt.Errorf("copy %s for the Helm chart: %w", f, err)
		}
		header := fmt.Sprintf("# Copied from config/%s by make manifests; do not edit.\n", relative(configDir, filepath.Join(src, f)))
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(f)), append([]byte(header), data...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// writeBuilt writes the objects kustomize makes of src, each to a file
// named after it.
func writeBuilt(configDir, src, dst string) error {
	resources, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), src)
	if err != nil {
		return fmt.Errorf("kustomize build %s: %w", src, err)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	header := fmt.Sprintf("# config/%s as kustomize builds it, written by make manifests; do not edit.\n", relative(configDir, src))
	written := map[string]bool{}
	for _, r := range resources.Resources() {
		name := r.GetName() + ".yaml"
		if written[name] {
			return fmt.Errorf("kustomize build %s: two objects named %s", src, r.GetName())
		}
		written[name] = true
		data, err := r.AsYAML()
		if err != nil {
			return fmt.Errorf("kustomize build %s: %w", src, err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), append([]byte(header), data...), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func relative(base, path string) string {
	rel, err := filepath.Rel(base, path)
	if err != nil {
		return path
	}
	return filepath.ToSlash(rel)
}
