package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/rejuv-dev/rejuv/test/images"
)

// containerdConfig is containerd's configuration: its own root, state and
// sockets, runc with cgroupfs, the locally built pause image as the sandbox
// image, and restrict_oom_score_adj because the harness may lack
// CAP_SYS_RESOURCE.
func containerdConfig(c Config) string {
	d := c.containerdDir()
	return fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"]

[grpc]
  address = %[3]q

[ttrpc]
  address = %[4]q

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %[5]q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[6]q
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = %[7]q
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[8]q
    conf_dir = %[9]q
`, filepath.Join(d, "root"), filepath.Join(d, "state"), c.CRISocket(), c.CRISocket()+".ttrpc",
		filepath.Join(d, "opt"), images.Pause.Ref(), c.Tools.Runc, c.Tools.CNIBinDir, c.cniConfDir())
}

func containerdSpec(c Config) (spec, error) {
	conf := filepath.Join(c.containerdDir(), "config.toml")
	if err := os.MkdirAll(c.containerdDir(), 0o755); err != nil {
		return spec{}, fmt.Errorf("containerd config: %w", err)
	}
	if err := os.WriteFile(conf, []byte(containerdConfig(c)), 0o644); err != nil {
		return spec{}, fmt.Errorf("containerd config: %w", err)
	}
	// The shim and runc are found through PATH.
	path := strings.Join([]string{filepath.Dir(c.Tools.Shim), filepath.Dir(c.Tools.Runc), os.Getenv("PATH")}, string(os.PathListSeparator))
	return spec{name: "containerd", path: c.Tools.Containerd, env: []string{"PATH=" + path},
		args: c.withExtra("containerd", []string{"--config=" + conf, "--log-level=info"})}, nil
}

// DialCRI connects to a CRI runtime's socket.
func DialCRI(socket string) (runtimeapi.RuntimeServiceClient, runtimeapi.ImageServiceClient, *grpc.ClientConn, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, nil, fmt.Errorf("dial CRI %s: %w", socket, err)
	}
	return runtimeapi.NewRuntimeServiceClient(conn), runtimeapi.NewImageServiceClient(conn), conn, nil
}

// criReady checks that the runtime answers the CRI Version call.
func criReady(socket string) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, err := os.Stat(socket); err != nil {
			return err
		}
		rt, _, conn, err := DialCRI(socket)
		if err != nil {
			return err
		}
		defer conn.Close()
		_, err = rt.Version(ctx, &runtimeapi.VersionRequest{})
		return err
	}
}

// removeSandboxes stops and removes every pod sandbox in the runtime, which
// also stops their containers, shims and network namespaces.
func removeSandboxes(ctx context.Context, socket string) (int, error) {
	rt, _, conn, err := DialCRI(socket)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	list, err := rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return 0, fmt.Errorf("list pod sandboxes: %w", err)
	}
	var errs []string
	for _, sb := range list.Items {
		if _, err := rt.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Sprintf("stop sandbox %s/%s: %v", sb.Metadata.GetNamespace(), sb.Metadata.GetName(), err))
			continue
		}
		if _, err := rt.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id}); err != nil {
			errs = append(errs, fmt.Sprintf("remove sandbox %s/%s: %v", sb.Metadata.GetNamespace(), sb.Metadata.GetName(), err))
		}
	}
	if len(errs) > 0 {
		return len(list.Items), fmt.Errorf("remove pod sandboxes: %s", strings.Join(errs, "; "))
	}
	return len(list.Items), nil
}

// importImage loads an image tarball into the runtime's k8s.io namespace,
// where the kubelet finds it.
func importImage(ctx context.Context, c Config, tarball string) error {
	if _, err := run(ctx, c.Tools.Ctr, "--address", c.CRISocket(), "--namespace", "k8s.io", "images", "import", tarball); err != nil {
		return fmt.Errorf("load image %s: %w", tarball, err)
	}
	return nil
}
