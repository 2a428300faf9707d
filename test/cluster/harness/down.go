package harness

import (
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
	if p := st.process("kubelet"); p != nil {
		note(p.Stop(stopGrace))
	}
	if st.process("containerd") != nil {
		note(removeAllSandboxes(ctx, cfg, st))
	}
	// The rest in reverse start order.
	for _, p := range slices.Backward(st.Processes) {
		note(p.Stop(stopGrace))
	}
	note(unmountUnder(cfg.Dir))
	if st.Host.KubeletStarted {
		note(removeKubeletCgroups())
		note(removeContainerLogLinks(cfg.podLogsDir()))
		if !st.Host.VarLibKubelet {
			note(unmountUnder(varLibKubelet))
			note(os.RemoveAll(varLibKubelet))
		}
		note(removeNewChains(ctx, cfg.Tools.IPTables, st.Host.IPTablesChains))
	}
	if st.Host.BridgeCreated {
		note(deleteBridge(ctx, cfg))
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

// removeAllSandboxes removes every pod sandbox through the CRI. When the
// instance's containerd is no longer running (a crashed session), it is
// started once more just for that, so that no container outlives Down.
func removeAllSandboxes(ctx context.Context, cfg Config, st *state) error {
	p := st.process("containerd")
	if !p.Alive() {
		if _, err := os.Stat(filepath.Join(cfg.containerdDir(), "config.toml")); err != nil {
			return nil
		}
		sp, err := containerdSpec(cfg)
		if err != nil {
			return err
		}
		sp.name = "containerd-cleanup"
		tmp, err := startProcess(cfg.logDir(), sp)
		if err != nil {
			return fmt.Errorf("restart containerd to remove pod sandboxes: %w", err)
		}
		defer func() { _ = tmp.Stop(stopGrace) }()
		if err := tmp.waitReady(ctx, 30*time.Second, criReady(cfg.CRISocket())); err != nil {
			return fmt.Errorf("restart containerd to remove pod sandboxes: %w", err)
		}
	}
	n, err := removeSandboxes(ctx, cfg.CRISocket())
	if err != nil {
		return err
	}
	if n > 0 {
		fmt.Fprintf(cfg.out(), "harness: removed %d pod sandboxes\n", n)
	}
	return nil
}
