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
// image, restrict_oom_score_adj because the harness may lack
// CAP_SYS_RESOURCE, and the hosts of registries (see registryHosts). The
// CRI plugin's part is in the form of the runtime's version: criConfig1
// (containerd 1.6, configuration version 2) or criConfig2 (containerd 2,
// version 3).
func containerdConfig(n Node) string {
	c := n.cfg
	version, disabled, cri := 2, `"io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing"`, criConfig1
	if c.Runtime == RuntimeContainerd2 {
		version, disabled, cri = 3, `"io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.erofs", "io.containerd.tracing.processor.v1.otlp", "io.containerd.internal.v1.tracing", "io.containerd.nri.v1.nri"`, criConfig2
	}
	d := n.containerdDir()
	return fmt.Sprintf(`version = %[1]d
root = %[2]q
state = %[3]q
disabled_plugins = [%[4]s]

[grpc]
  address = %[5]q

[ttrpc]
  address = %[6]q

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = %[7]q

`, version, filepath.Join(d, "root"), filepath.Join(d, "state"), disabled, n.socketInNode(), n.socketInNode()+".ttrpc", filepath.Join(d, "opt")) +
		fmt.Sprintf(cri, images.Pause.Ref(), c.Tools.Runc, c.Tools.CNIBinDir, n.cniConfDir(), n.registryHostsDir())
}

// criConfig1 is the CRI plugin's configuration for containerd 1.6, of the
// sandbox image, runc, the CNI binaries' and configuration's directories
// and the registry hosts' directory.
const criConfig1 = `[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[1]q
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = %[2]q
        SystemdCgroup = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[3]q
    conf_dir = %[4]q

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = %[5]q
`

// criConfig2 is criConfig1 for containerd 2: the CRI plugin is split into
// its images and runtime plugins (io.containerd.cri.v1.images,
// io.containerd.cri.v1.runtime), the sandbox image is a pinned image, and
// CNI takes a list of binary directories.
const criConfig2 = `[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"

  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %[1]q

  [plugins."io.containerd.cri.v1.images".registry]
    config_path = %[5]q

[plugins."io.containerd.cri.v1.runtime"]
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false

  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"

    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = %[2]q
        SystemdCgroup = false

  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = [%[3]q]
    conf_dir = %[4]q
`

// registryHosts writes the hosts.toml of the cluster's registry under its
// own address, and under the test images' registry, rejuv.local, which it
// serves: the node pulls both over plain http from loopback. Without a
// registry (a containerd of its own), there is nothing to write.
func registryHosts(n Node) error {
	c, dir := n.cfg, n.registryHostsDir()
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("containerd registry hosts: %w", err)
	}
	if c.Ports.Registry == 0 {
		return nil
	}
	server := "http://" + c.Registry()
	hosts := fmt.Sprintf("server = %[1]q\n\n[host.%[1]q]\n  capabilities = [\"pull\", \"resolve\"]\n", server)
	for _, host := range []string{c.Registry(), images.Registry} {
		if err := os.MkdirAll(filepath.Join(dir, host), 0o755); err != nil {
			return fmt.Errorf("containerd registry hosts: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, host, "hosts.toml"), []byte(hosts), 0o644); err != nil {
			return fmt.Errorf("containerd registry hosts: %w", err)
		}
	}
	return nil
}

// containerdSpec is how the node's containerd starts, in the machine's
// mount namespace; see Node.enter for the other nodes'.
func containerdSpec(n Node) (spec, error) {
	c := n.cfg
	conf := filepath.Join(n.containerdDir(), "config.toml")
	if err := os.MkdirAll(n.containerdDir(), 0o755); err != nil {
		return spec{}, fmt.Errorf("containerd config of %s: %w", n.Name, err)
	}
	if err := os.WriteFile(conf, []byte(containerdConfig(n)), 0o644); err != nil {
		return spec{}, fmt.Errorf("containerd config of %s: %w", n.Name, err)
	}
	if err := registryHosts(n); err != nil {
		return spec{}, err
	}
	// The shim and runc are found through PATH.
	path := strings.Join([]string{filepath.Dir(c.Tools.Shim), filepath.Dir(c.Tools.Runc), os.Getenv("PATH")}, string(os.PathListSeparator))
	return spec{name: n.Component(ComponentContainerd), path: c.Tools.Containerd, env: []string{"PATH=" + path},
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
