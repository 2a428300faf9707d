package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Tools are the host programs the harness runs, each found on the machine
// or provided through an environment variable.
type Tools struct {
	Etcd       string
	Containerd string
	Ctr        string
	Shim       string
	Runc       string
	CNIBinDir  string
	IPTables   string
	IP         string
	// Unshare and Nsenter (util-linux) give every node but the first a
	// mount namespace of its own.
	Unshare string
	Nsenter string
	Busybox string
	// Prometheus and Promtool, Debian's: the end-to-end tests' Prometheus
	// and the alert rules' unit tests.
	Prometheus string
	Promtool   string
	// KubeBinDir, when set, holds prebuilt kube-apiserver,
	// kube-controller-manager, kube-scheduler and kubelet; nothing is built.
	KubeBinDir string
}

// tool is one host requirement: where it is looked for, which Debian package
// provides it and which environment variable overrides it.
type tool struct {
	what   string
	env    string
	pkg    string
	path   *string
	isDir  bool
	need   []string // files that must exist inside a directory tool
	look   []string // default locations, first existing wins
	onPATH string   // else looked up on PATH by this name
}

// DefaultTools returns the tools found on this machine, with environment
// overrides applied. Missing ones stay empty and are reported by ensureTools.
func DefaultTools() Tools {
	var t Tools
	for _, tl := range t.requirements() {
		*tl.path = locate(tl)
	}
	t.KubeBinDir = os.Getenv("REJUV_KUBE_BIN_DIR")
	return t
}

func (t *Tools) requirements() []tool {
	return []tool{
		{what: "etcd", env: "REJUV_ETCD", pkg: "etcd-server", path: &t.Etcd, onPATH: "etcd", look: []string{"/usr/bin/etcd"}},
		{what: "containerd", env: "REJUV_CONTAINERD", pkg: "containerd", path: &t.Containerd, onPATH: "containerd"},
		{what: "ctr", env: "REJUV_CTR", pkg: "containerd", path: &t.Ctr, onPATH: "ctr"},
		{what: "containerd-shim-runc-v2", env: "REJUV_CONTAINERD_SHIM", pkg: "containerd", path: &t.Shim, onPATH: "containerd-shim-runc-v2"},
		{what: "runc", env: "REJUV_RUNC", pkg: "runc", path: &t.Runc, onPATH: "runc"},
		{what: "CNI plugins (bridge, host-local, loopback)", env: "REJUV_CNI_BIN_DIR", pkg: "containernetworking-plugins", path: &t.CNIBinDir, isDir: true,
			need: []string{"bridge", "host-local", "loopback"}, look: []string{"/usr/lib/cni", "/opt/cni/bin"}},
		{what: "iptables", env: "REJUV_IPTABLES", pkg: "iptables", path: &t.IPTables, onPATH: "iptables", look: []string{"/usr/sbin/iptables", "/sbin/iptables"}},
		{what: "ip", env: "REJUV_IP", pkg: "iproute2", path: &t.IP, onPATH: "ip", look: []string{"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip"}},
		{what: "unshare", env: "REJUV_UNSHARE", pkg: "util-linux", path: &t.Unshare, onPATH: "unshare", look: []string{"/usr/bin/unshare"}},
		{what: "nsenter", env: "REJUV_NSENTER", pkg: "util-linux", path: &t.Nsenter, onPATH: "nsenter", look: []string{"/usr/bin/nsenter"}},
		// Copied into the testapp image so that exec works in it.
		{what: "busybox (static)", env: "REJUV_BUSYBOX", pkg: "busybox-static", path: &t.Busybox, look: []string{"/bin/busybox", "/usr/bin/busybox"}},
		{what: "prometheus", env: "REJUV_PROMETHEUS", pkg: "prometheus", path: &t.Prometheus, look: []string{"/usr/bin/prometheus"}},
		{what: "promtool", env: "REJUV_PROMTOOL", pkg: "prometheus", path: &t.Promtool, look: []string{"/usr/bin/promtool"}},
	}
}

func locate(tl tool) string {
	if v := os.Getenv(tl.env); v != "" {
		return v
	}
	for _, p := range tl.look {
		if usable(tl, p) {
			return p
		}
	}
	if tl.onPATH != "" {
		if p, err := exec.LookPath(tl.onPATH); err == nil {
			return p
		}
	}
	return ""
}

func usable(tl tool, p string) bool {
	if p == "" {
		return false
	}
	fi, err := os.Stat(p)
	if err != nil {
		return false
	}
	if !tl.isDir {
		return !fi.IsDir() && fi.Mode()&0o111 != 0
	}
	for _, n := range tl.need {
		if _, err := os.Stat(filepath.Join(p, n)); err != nil {
			return false
		}
	}
	return fi.IsDir()
}

// missing lists the tools that are not usable.
func (t *Tools) missing() []tool {
	var out []tool
	for _, tl := range t.requirements() {
		if !usable(tl, *tl.path) {
			out = append(out, tl)
		}
	}
	return out
}

// ensureTools installs missing tools from Debian's packages when running as
// root with apt-get, and otherwise fails with a message naming each missing
// piece, its package and the variable that points at an existing copy.
func ensureTools(ctx context.Context, cfg *Config) error {
	missing := cfg.Tools.missing()
	if len(missing) == 0 {
		return nil
	}
	// A program the user pointed at explicitly is not replaced by a package.
	var bad []string
	for _, tl := range missing {
		if v := os.Getenv(tl.env); v != "" && v == *tl.path {
			bad = append(bad, fmt.Sprintf("%s=%s is not a usable %s", tl.env, v, tl.what))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("check programs: %s", strings.Join(bad, "; "))
	}
	pkgs := packagesOf(missing)
	aptGet, aptErr := exec.LookPath("apt-get")
	switch {
	case os.Geteuid() != 0:
		return missingToolsError(missing, "not running as root, so nothing can be installed")
	case aptErr != nil:
		return missingToolsError(missing, "apt-get is not available to install them")
	}
	fmt.Fprintf(cfg.out(), "harness: installing Debian packages: %s\n", strings.Join(pkgs, " "))
	if err := runLogged(ctx, aptGet, "update", "-q"); err != nil {
		return fmt.Errorf("install %s: apt-get update: %w", strings.Join(pkgs, " "), err)
	}
	args := append([]string{"install", "-y", "-q", "--no-install-recommends"}, pkgs...)
	if err := runLogged(ctx, aptGet, args...); err != nil {
		return fmt.Errorf("install %s: %w", strings.Join(pkgs, " "), err)
	}
	for _, tl := range cfg.Tools.requirements() {
		if *tl.path == "" || !usable(tl, *tl.path) {
			*tl.path = locate(tl)
		}
	}
	if still := cfg.Tools.missing(); len(still) > 0 {
		return missingToolsError(still, "still missing after installing their packages")
	}
	return nil
}

func packagesOf(ts []tool) []string {
	set := map[string]bool{}
	for _, t := range ts {
		set[t.pkg] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func missingToolsError(ts []tool, why string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "the cluster needs programs that are missing (%s):", why)
	for _, t := range ts {
		fmt.Fprintf(&b, "\n  - %s: install Debian package %q, or set %s to an existing copy", t.what, t.pkg, t.env)
		if t.isDir {
			fmt.Fprintf(&b, " (a directory holding %s)", strings.Join(t.need, ", "))
		}
	}
	return errors.New(b.String())
}

// runLogged runs a command and, when it fails, includes the end of its output
// in the error.
func runLogged(ctx context.Context, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w\n%s", filepath.Base(name), strings.Join(args, " "), err, tail(out.String(), 20))
	}
	return nil
}

// run runs a command and returns its trimmed output, or an error carrying it.
func run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	s := strings.TrimSpace(string(out))
	if err != nil {
		return s, fmt.Errorf("%s %s: %w: %s", filepath.Base(name), strings.Join(args, " "), err, s)
	}
	return s, nil
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// EnsurePromtool installs the cluster's tools when they are missing, and
// returns promtool's path.
func EnsurePromtool(ctx context.Context) (string, error) {
	cfg, err := DefaultConfig()
	if err != nil {
		return "", err
	}
	if err := ensureTools(ctx, &cfg); err != nil {
		return "", err
	}
	return cfg.Tools.Promtool, nil
}
