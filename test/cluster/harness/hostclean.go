package harness

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// unmountUnder unmounts everything mounted below dir (the kubelet's volume
// tmpfs, containerd's sandbox shm and rootfs mounts), deepest first.
func unmountUnder(dir string) error {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("read mounts: %w", err)
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	var points []string
	for line := range strings.SplitSeq(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMountPath(f[4])
		if strings.HasPrefix(mp, prefix) {
			points = append(points, mp)
		}
	}
	slices.SortFunc(points, func(a, b string) int { return len(b) - len(a) })
	var errs []string
	for _, mp := range points {
		if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && err != syscall.EINVAL && err != syscall.ENOENT {
			errs = append(errs, fmt.Sprintf("%s: %v", mp, err))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("unmount below %s: %s", dir, strings.Join(errs, "; "))
	}
	return nil
}

// unescapeMountPath decodes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			var v int
			if _, err := fmt.Sscanf(s[i+1:i+4], "%3o", &v); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeKubeletCgroups removes the kubelets' kubepods cgroup trees, which
// are empty once every pod is gone, and the cgroups the harness made for
// the nodes after the first (see Node.cgroupRoot), from every mounted
// hierarchy.
func removeKubeletCgroups(cfg Config) error {
	patterns := []string{"/sys/fs/cgroup/*/kubepods*", "/sys/fs/cgroup/kubepods*"}
	for _, n := range cfg.Nodes() {
		if root := n.cgroupRoot(); root != "" {
			patterns = append(patterns, "/sys/fs/cgroup/*"+root, "/sys/fs/cgroup"+root)
		}
	}
	var roots []string
	for _, p := range patterns {
		more, _ := filepath.Glob(p)
		roots = append(roots, more...)
	}
	var errs []string
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
		// Children before parents.
		slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
		for _, d := range dirs {
			if err := syscall.Rmdir(d); err != nil && err != syscall.ENOENT {
				errs = append(errs, fmt.Sprintf("%s: %v", d, err))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("remove kubepods cgroups: %s", strings.Join(errs, "; "))
	}
	return nil
}

// removeContainerLogLinks removes the kubelet's links in /var/log/containers
// that point into this instance's pod log directory.
func removeContainerLogLinks(podLogsDir string) error {
	links, _ := filepath.Glob("/var/log/containers/*.log")
	for _, l := range links {
		target, err := os.Readlink(l)
		if err == nil && strings.HasPrefix(target, podLogsDir+"/") {
			if err := os.Remove(l); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("remove container log link %s: %w", l, err)
			}
		}
	}
	return nil
}

// varLibKubelet is where the kubelet keeps its device-plugin and
// pod-resources sockets whatever its root directory.
const varLibKubelet = "/var/lib/kubelet"

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
