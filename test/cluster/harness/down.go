package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

const stopGrace = 10 * time.Second

// Down stops the instance's processes (by the PIDs it recorded, never by
// name), removes its pod sandboxes, mounts, cgroups, bridge and iptables
// chains, and restores the kernel settings the kubelet changed. Down of an
// instance that is not running does nothing.
func Down(ctx context.Context, cfg Config) error {
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return fmt.Errorf("cluster directory: %w", err)
	}
	unlock, err := lockFile(ctx, cfg.path(".lock"))
	if err != nil {
		return fmt.Errorf("lock cluster %s: %w", cfg.Dir, err)
	}
	defer unlock()
	st, err := loadState(cfg.Dir)
	if err != nil {
		return err
	}
	if st == nil {
		fmt.Fprintf(cfg.out(), "harness: no cluster running in %s\n", cfg.Dir)
		return nil
	}
	if err := teardown(ctx, cfg, st); err != nil {
		return err
	}
	fmt.Fprintf(cfg.out(), "harness: cluster in %s stopped and cleaned up\n", cfg.Dir)
	return nil
}

// teardown undoes everything st records. It goes on past failures, so that
// one stuck piece does not leave the rest running, and keeps the state file
// when something could not be undone so that a later Down can retry.
func teardown(ctx context.Context, cfg Config, st *state) error {
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	// The nodes and runtime of the instance recorded, whatever cfg now
	// says.
	cfg.NodeCount = max(1, st.Nodes)
	if runtime := cmp.Or(st.Runtime, RuntimeContainerd1); runtime != cfg.Runtime {
		cfg.Runtime = runtime
		if err := cfg.useRuntime(filepath.Dir(cfg.RuntimeBuildDir)); err != nil {
			return err
		}
	}
	for _, n := range cfg.Nodes() {
		if p := st.process(n.Component(ComponentKubelet)); p != nil {
			note(p.Stop(stopGrace))
		}
	}
	for _, n := range cfg.Nodes() {
		if st.process(n.Component(ComponentContainerd)) != nil {
			note(removeAllSandboxes(ctx, n, st))
		}
	}
	// The rest in reverse start order.
	for _, p := range slices.Backward(st.Processes) {
		note(p.Stop(stopGrace))
	}
	note(unmountUnder(cfg.Dir))
	if st.Host.KubeletStarted {
		note(removeKubeletCgroups(cfg))
		for _, n := range cfg.Nodes() {
			note(removeContainerLogLinks(n.podLogsDir()))
		}
		if !st.Host.VarLibKubelet {
			note(unmountUnder(varLibKubelet))
			note(os.RemoveAll(varLibKubelet))
		}
		note(removeNewChains(ctx, cfg.Tools.IPTables, st.Host.IPTablesChains))
	}
	if st.Host.BridgeCreated {
		note(deleteBridge(ctx, cfg, cfg.Bridge))
	}
	for _, b := range st.Host.Bridges {
		note(deleteBridge(ctx, cfg, b))
	}
	if st.Host.KubeletStarted {
		note(restoreSysctls(st.Host.Sysctls))
	}
	if len(errs) > 0 {
		_ = st.save(cfg.Dir)
		return fmt.Errorf("stop cluster in %s: %w", cfg.Dir, errors.Join(errs...))
	}
	if err := os.Remove(statePath(cfg.Dir)); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove cluster state: %w", err)
	}
	return nil
}

// removeAllSandboxes removes every pod sandbox of the node through the
// CRI. When the node's containerd is no longer running (a crashed session),
// it is started once more just for that, in a mount namespace of the node's
// held again if need be, so that no container outlives Down.
func removeAllSandboxes(ctx context.Context, n Node, st *state) error {
	cfg := n.cfg
	p := st.process(n.Component(ComponentContainerd))
	if !p.Alive() {
		if _, err := os.Stat(filepath.Join(n.containerdDir(), "config.toml")); err != nil {
			return nil
		}
		if holder := st.process(n.namespaceProcess()); !n.First() && (holder == nil || !holder.Alive()) {
			s, err := namespaceStep(n, st)
			if err != nil {
				return err
			}
			tmp, err := startProcess(cfg.logDir(), s.spec)
			if err != nil {
				return fmt.Errorf("hold the mount namespace of %s again to remove its pod sandboxes: %w", n.Name, err)
			}
			defer func() { _ = tmp.Stop(stopGrace) }()
			// Recorded in place of the dead one, for the containerd that
			// enters it and for its readiness.
			if holder != nil {
				*holder = *tmp
			} else {
				st.Processes = append(st.Processes, tmp)
			}
			if err := tmp.waitReady(ctx, 30*time.Second, s.ready); err != nil {
				return fmt.Errorf("hold the mount namespace of %s again to remove its pod sandboxes: %w", n.Name, err)
			}
		}
		s, err := runtimeStep(n, st)
		if err != nil {
			return err
		}
		s.spec.name += "-cleanup"
		tmp, err := startProcess(cfg.logDir(), s.spec)
		if err != nil {
			return fmt.Errorf("restart the containerd of %s to remove its pod sandboxes: %w", n.Name, err)
		}
		defer func() { _ = tmp.Stop(stopGrace) }()
		if err := tmp.waitReady(ctx, 30*time.Second, s.ready); err != nil {
			return fmt.Errorf("restart the containerd of %s to remove its pod sandboxes: %w", n.Name, err)
		}
	}
	count, err := removeSandboxes(ctx, n.CRISocket)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if count > 0 {
		fmt.Fprintf(cfg.out(), "harness: removed %d pod sandboxes of %s\n", count, n.Name)
	}
	return nil
}
