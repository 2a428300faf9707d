package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// namespaceStep is how the process starts that holds the mount namespace of a node
// other than the first: in it, the first node's runtime socket directory
// and /var/lib/kubelet are the node's own directories (Node.runDir,
// Node.varLibKubeletDir). The node's containerd and kubelet enter it (see
// enter), and so their pods, so that a hostPath of the runtime's socket
// directory gives a pod its own node's runtime. Mounts made in it stay in
// it: the namespace and its mounts go when its last process does.
// It is ready once the holder recorded in st under its name has made its
// mounts.
func namespaceStep(n Node, st *state) (step, error) {
	binds := [][2]string{{n.runDir(), filepath.Dir(n.socketInNode())}, {n.varLibKubeletDir(), varLibKubelet}}
	var script []string
	for _, b := range binds {
		for _, d := range b {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return step{}, fmt.Errorf("mount namespace of %s: %w", n.Name, err)
			}
		}
		script = append(script, fmt.Sprintf("mount --bind %s %s", strconv.Quote(b[0]), strconv.Quote(b[1])))
	}
	script = append(script, "exec sleep infinity")
	sp := spec{name: n.namespaceProcess(), path: n.cfg.Tools.Unshare,
		args: []string{"--mount", "--propagation", "private", "--", "/bin/sh", "-ec", strings.Join(script, "\n")}}
	return step{spec: sp, ready: func(context.Context) error {
		holder := st.process(sp.name)
		if holder == nil {
			return fmt.Errorf("no %s recorded", sp.name)
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/mountinfo", holder.PID))
		if err != nil {
			return err
		}
		for line := range strings.SplitSeq(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 4 && unescapeMountPath(f[4]) == varLibKubelet {
				return nil
			}
		}
		return fmt.Errorf("the mount namespace of %s has no %s of its own yet", n.Name, varLibKubelet)
	}}, nil
}

// enter has a node's process start in the node's mount namespace, which
// the running holder recorded in st keeps; the first node's processes run
// in the machine's.
func (n Node) enter(sp spec, st *state) (spec, error) {
	if n.First() {
		return sp, nil
	}
	holder := st.process(n.namespaceProcess())
	if holder == nil || !holder.Alive() {
		return spec{}, fmt.Errorf("start %s: the mount namespace of %s is not held (no running %s)", sp.name, n.Name, n.namespaceProcess())
	}
	sp.args = append([]string{fmt.Sprintf("--mount=/proc/%d/ns/mnt", holder.PID), "--", sp.path}, sp.args...)
	sp.path = n.cfg.Tools.Nsenter
	return sp, nil
}

// createCgroupRoot makes the cgroup the node's kubelet puts its pods under
// (Node.cgroupRoot) in every mounted hierarchy, where the kubelet expects
// to find it; a cpuset cgroup takes its parent's processors and memory
// nodes, without which nothing can run in it.
func createCgroupRoot(n Node) error {
	root := n.cgroupRoot()
	if root == "" {
		return nil
	}
	hierarchies, _ := filepath.Glob("/sys/fs/cgroup/*")
	for _, h := range hierarchies {
		if _, err := os.Stat(filepath.Join(h, "cgroup.procs")); err != nil {
			continue
		}
		dir := filepath.Join(h, root)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create the cgroup %s of %s: %w", dir, n.Name, err)
		}
		for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
			v, err := os.ReadFile(filepath.Join(h, f))
			if err != nil {
				continue
			}
			if err := os.WriteFile(filepath.Join(dir, f), v, 0o644); err != nil {
				return fmt.Errorf("create the cgroup %s of %s: %s: %w", dir, n.Name, f, err)
			}
		}
	}
	return nil
}
