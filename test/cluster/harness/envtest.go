package harness

import (
	"context"
	"fmt"
	"path/filepath"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Envtest returns a controller-runtime envtest environment that runs the
// harness's own kube-apiserver and etcd binaries (building the former if it
// is not cached yet), for integration tests that need an API server but no
// kubelet. The caller starts and stops it.
func Envtest(ctx context.Context) (*envtest.Environment, error) {
	cfg, err := DefaultConfig()
	if err != nil {
		return nil, err
	}
	if err := ensureTools(ctx, &cfg); err != nil {
		return nil, err
	}
	if err := EnsureKubeBinaries(ctx, cfg); err != nil {
		return nil, err
	}
	env := &envtest.Environment{}
	env.ControlPlane.GetAPIServer().Path = cfg.KubeBinary("kube-apiserver")
	env.ControlPlane.Etcd = &envtest.Etcd{Path: cfg.Tools.Etcd}
	if env.ControlPlane.Etcd.Path == "" {
		return nil, fmt.Errorf("envtest: no etcd binary")
	}
	return env, nil
}

// EnvtestWithCRDs is Envtest with Rejuv's generated CRDs (config/crd/bases)
// installed when it starts.
func EnvtestWithCRDs(ctx context.Context) (*envtest.Environment, error) {
	env, err := Envtest(ctx)
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	env.CRDDirectoryPaths = []string{filepath.Join(root, "config", "crd", "bases")}
	env.ErrorIfCRDPathMissing = true
	return env, nil
}
