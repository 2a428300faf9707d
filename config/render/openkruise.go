package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/yaml"

	"github.com/rejuv-dev/rejuv/config/installfile"
)

// openKruisePatches are the files of config/openkruise that change objects
// of config/default, copied for the chart's crrExecutor=openkruise: the
// manager's rights, its flags and namespace, and the user roles.
var openKruisePatches = []string{"role.yaml", "manager.yaml", "user_roles.yaml"}

// omitted is what config/openkruise leaves out of config/default, by the
// names config/ gives (before config/default's prefix and namespace):
// whole objects, and webhooks of the webhook configurations it keeps.
type omitted struct {
	Objects  []omittedObject `json:"objects"`
	Webhooks []string        `json:"webhooks"`
}

type omittedObject struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// writeOpenKruiseFiles writes files/openkruise for the chart: the patch
// files of config/openkruise as they are, and omitted.yaml, what building
// config/openkruise leaves out of config/default. An object that
// config/openkruise adds, which the chart would not install, is an error.
func writeOpenKruiseFiles(configDir, out string) error {
	src := filepath.Join(configDir, "openkruise")
	dst := filepath.Join(out, "openkruise")
	if err := copyResources(configDir, src, dst, openKruisePatches); err != nil {
		return err
	}
	o, err := openKruiseOmits(filepath.Join(configDir, "default"), src)
	if err != nil {
		return err
	}
	data, err := yaml.Marshal(o)
	if err != nil {
		return err
	}
	header := "# What config/openkruise leaves out of config/default, by config's names,\n# found by building both; written by make manifests; do not edit.\n"
	return os.WriteFile(filepath.Join(dst, "omitted.yaml"), append([]byte(header), data...), 0o644)
}

func openKruiseOmits(defaultDir, openKruiseDir string) (omitted, error) {
	full, err := installfile.Resources(defaultDir)
	if err != nil {
		return omitted{}, err
	}
	variant, err := installfile.Resources(openKruiseDir)
	if err != nil {
		return omitted{}, err
	}
	// Built, the objects bear config/default's namePrefix; the chart's
	// files have config's names.
	k, err := kustomization(defaultDir)
	if err != nil {
		return omitted{}, err
	}
	var o omitted
	for _, r := range full.Resources() {
		if _, err := variant.GetById(r.OrgId()); err != nil {
			o.Objects = append(o.Objects, omittedObject{Kind: r.GetKind(), Name: strings.TrimPrefix(r.GetName(), k.NamePrefix)})
		}
	}
	for _, r := range variant.Resources() {
		if _, err := full.GetById(r.OrgId()); err != nil {
			return omitted{}, fmt.Errorf("%s adds %s %s, which the chart's crrExecutor=openkruise does not install", openKruiseDir, r.GetKind(), r.GetName())
		}
	}
	// The webhooks of the configurations both install.
	fullHooks, err := webhookNames(full, variant)
	if err != nil {
		return omitted{}, err
	}
	variantHooks, err := webhookNames(variant, variant)
	if err != nil {
		return omitted{}, err
	}
	for _, w := range fullHooks {
		if !slices.Contains(variantHooks, w) {
			o.Webhooks = append(o.Webhooks, w)
		}
	}
	return o, nil
}

// webhookNames are the names of the webhooks of the webhook
// configurations in m that kept also holds.
func webhookNames(m, kept resmap.ResMap) ([]string, error) {
	var names []string
	for _, r := range m.Resources() {
		if !strings.HasSuffix(r.GetKind(), "WebhookConfiguration") {
			continue
		}
		if _, err := kept.GetById(r.OrgId()); err != nil {
			continue
		}
		fields, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("read %s %s: %w", r.GetKind(), r.GetName(), err)
		}
		hooks, _ := fields["webhooks"].([]any)
		for _, h := range hooks {
			if w, ok := h.(map[string]any); ok {
				if n, ok := w["name"].(string); ok {
					names = append(names, n)
				}
			}
		}
	}
	return names, nil
}
