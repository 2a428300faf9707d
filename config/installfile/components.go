package installfile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// runtimePrefix starts the folder of each runtime's component in
// config/components (runtime-crio, runtime-k3s, runtime-cri-dockerd).
const runtimePrefix = "runtime-"

// defaultRuntime is the runtime config/default's daemon finds without a
// component.
const defaultRuntime = "containerd"

// Components are the folders of the kustomize components an install adds
// to config/default: the nodes' runtime's (runtime: crio, k3s,
// cri-dockerd; containerd or empty adds none), then each of names, a
// folder of configDir/components (monitoring, image-pull-secret, ...) or,
// failing that, a folder of the user's own that holds a kustomization.
// names may be separated by spaces or commas. One runtime at most.
func Components(configDir, runtime, names string) ([]string, error) {
	shipped, err := shippedComponents(configDir)
	if err != nil {
		return nil, err
	}
	var dirs []string
	runtimes := 0
	if runtime != "" && runtime != defaultRuntime {
		if !slices.Contains(shipped, runtimePrefix+runtime) {
			return nil, fmt.Errorf("runtime %q: want %s", runtime, strings.Join(runtimeNames(shipped), ", "))
		}
		dirs = append(dirs, filepath.Join(configDir, "components", runtimePrefix+runtime))
		runtimes++
	}
	for name := range strings.FieldsSeq(strings.ReplaceAll(names, ",", " ")) {
		switch {
		case slices.Contains(shipped, name):
			dirs = append(dirs, filepath.Join(configDir, "components", name))
			if strings.HasPrefix(name, runtimePrefix) {
				runtimes++
			}
		case isKustomization(name):
			dirs = append(dirs, name)
		default:
			return nil, fmt.Errorf("component %q: neither one of %s (in %s) nor a folder with a kustomization.yaml",
				name, strings.Join(shipped, ", "), filepath.Join(configDir, "components"))
		}
	}
	if runtimes > 1 {
		return nil, fmt.Errorf("components %v: more than one runtime's; the daemon talks to one", dirs)
	}
	return dirs, nil
}

// shippedComponents are the names of the folders of configDir/components.
func shippedComponents(configDir string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(configDir, "components"))
	if err != nil {
		return nil, fmt.Errorf("list the components: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.IsDir() && isKustomization(filepath.Join(configDir, "components", e.Name())) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// runtimeNames are the runtimes the components serve, and containerd.
func runtimeNames(shipped []string) []string {
	names := []string{defaultRuntime}
	for _, c := range shipped {
		if r, ok := strings.CutPrefix(c, runtimePrefix); ok {
			names = append(names, r)
		}
	}
	return names
}

func isKustomization(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "kustomization.yaml"))
	return err == nil
}
