package harness

import (
	"context"
	"fmt"
	"path/filepath"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/rejuv-dev/rejuv/test/openkruise"
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
	return envtestWith(ctx, nil, "")
}

// EnvtestBesideOpenKruise is Envtest with the CRDs of a cluster that runs
// OpenKruise and Rejuv beside it: OpenKruise's ContainerRecreateRequest
// CRD (v1alpha1 alone) and Rejuv's RecreatePolicy CRD.
func EnvtestBesideOpenKruise(ctx context.Context) (*envtest.Environment, error) {
	crd, err := openkruise.CRD()
	if err != nil {
		return nil, err
	}
	return envtestWith(ctx, []*apiextensionsv1.CustomResourceDefinition{crd}, "rejuv.dev_recreatepolicies.yaml")
}

// envtestWith is Envtest installing crds and, of config/crd/bases, the one
// file named (every file when empty).
func envtestWith(ctx context.Context, crds []*apiextensionsv1.CustomResourceDefinition, file string) (*envtest.Environment, error) {
	env, err := Envtest(ctx)
	if err != nil {
		return nil, err
	}
	root, err := RepoRoot()
	if err != nil {
		return nil, err
	}
	env.CRDs = crds
	env.CRDDirectoryPaths = []string{filepath.Join(root, "config", "crd", "bases", file)}
	env.ErrorIfCRDPathMissing = true
	return env, nil
}
