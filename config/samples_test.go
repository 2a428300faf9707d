package config

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestSamplesRunTheDemoAppOfThisVersion: config/samples' workloads run
// the demo app make images builds and a release holds, rejuv-demo tagged
// with Rejuv's version (no image only the local cluster pulls), and its
// kustomization lists every sample, so that an overlay's images: entry,
// as its README shows, pulls them all from a registry.
func TestSamplesRunTheDemoAppOfThisVersion(t *testing.T) {
	version, err := Version()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("samples/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		listed = append(listed, filepath.Base(f))
		for _, o := range parse(t, f, readFile(t, f)) {
			for _, c := range list(o, "spec", "template", "spec", "containers") {
				if got := str(c, "image"); got != "rejuv-demo:"+version {
					t.Errorf("%s: %s %s runs %s, want rejuv-demo:%s", f, str(o, "kind"), str(o, "metadata", "name"), got, version)
				}
			}
		}
	}
	var resources []string
	for _, o := range build(t, "samples") {
		resources = append(resources, str(o, "kind")+"/"+str(o, "metadata", "name"))
	}
	if len(listed) < 5 || len(resources) != 9 || resources[0] != "Namespace/rejuv-demo" {
		t.Errorf("config/samples has %v, and its kustomization builds %v: want every sample (4 workloads, 4 policies), the namespace first", listed, resources)
	}
	k := parse(t, "samples/kustomization.yaml", readFile(t, "samples/kustomization.yaml"))
	var inKustomization []string
	for _, r := range list(k[0], "resources") {
		inKustomization = append(inKustomization, r.(string))
	}
	slices.Sort(inKustomization)
	if !slices.Equal(inKustomization, listed) {
		t.Errorf("samples/kustomization.yaml lists %v, the folder holds %v", inKustomization, listed)
	}
	r := build(t, overlay(t, "resources:\n- %s\nimages:\n- name: rejuv-demo\n  newName: registry.example.com/team/rejuv-demo\n", "samples"))
	for _, d := range r.all("Deployment") {
		if got := str(list(d, "spec", "template", "spec", "containers")[0], "image"); got != "registry.example.com/team/rejuv-demo:"+version {
			t.Errorf("with the README's overlay, Deployment %s runs %s", str(d, "metadata", "name"), got)
		}
	}
}
