package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// hostSysctls are the kernel settings the kubelet, kube-proxy and the
// bridge plugin change; Down puts back what was there before Up.
var hostSysctls = []string{
	"vm.overcommit_memory",
	"vm.panic_on_oom",
	"kernel.panic",
	"kernel.panic_on_oops",
	"kernel.keys.root_maxkeys",
	"kernel.keys.root_maxbytes",
	"net.ipv4.ip_forward",
	// kube-proxy lets node ports answer on loopback.
	"net.ipv4.conf.all.route_localnet",
}

func sysctlPath(key string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
}

func readSysctls() map[string]string {
	out := map[string]string{}
	for _, k := range hostSysctls {
		if b, err := os.ReadFile(sysctlPath(k)); err == nil {
			out[k] = strings.TrimSpace(string(b))
		}
	}
	return out
}

// restoreSysctls writes back the recorded values that have changed.
func restoreSysctls(saved map[string]string) error {
	var failed []string
	for k, v := range saved {
		b, err := os.ReadFile(sysctlPath(k))
		if err == nil && strings.TrimSpace(string(b)) == v {
			continue
		}
		if err := os.WriteFile(sysctlPath(k), []byte(v), 0o644); err != nil {
			failed = append(failed, fmt.Sprintf("%s=%s: %v", k, v, err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("restore kernel settings: %s", strings.Join(failed, "; "))
	}
	return nil
}

// iptablesTables are where the kubelet and CNI plugins add chains.
var iptablesTables = []string{"filter", "nat", "mangle"}

// listChains returns "table/chain" for every user chain of iptables.
func listChains(ctx context.Context, iptables string) ([]string, error) {
	var out []string
	for _, table := range iptablesTables {
		s, err := run(ctx, iptables, "-w", "5", "-t", table, "-S")
		if err != nil {
			return nil, fmt.Errorf("list iptables chains: %w", err)
		}
		for line := range strings.SplitSeq(s, "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "-N" {
				out = append(out, table+"/"+f[1])
			}
		}
	}
	return out, nil
}

// removeNewChains deletes the iptables chains that did not exist before Up,
// first removing every rule that jumps to them.
func removeNewChains(ctx context.Context, iptables string, before []string) error {
	now, err := listChains(ctx, iptables)
	if err != nil {
		return err
	}
	var added []string
	for _, c := range now {
		if !slices.Contains(before, c) {
			added = append(added, c)
		}
	}
	if len(added) == 0 {
		return nil
	}
	var errs []string
	for _, table := range iptablesTables {
		rules, err := run(ctx, iptables, "-w", "5", "-t", table, "-S")
		if err != nil {
			return fmt.Errorf("remove iptables chains: %w", err)
		}
		for line := range strings.SplitSeq(rules, "\n") {
			f := ruleFields(line)
			if len(f) < 2 || f[0] != "-A" {
				continue
			}
			i := slices.Index(f, "-j")
			if i < 0 || i+1 >= len(f) || !slices.Contains(added, table+"/"+f[i+1]) {
				continue
			}
			args := append([]string{"-w", "5", "-t", table, "-D"}, f[1:]...)
			if _, err := run(ctx, iptables, args...); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	for _, c := range added {
		table, chain, _ := strings.Cut(c, "/")
		if _, err := run(ctx, iptables, "-w", "5", "-t", table, "-F", chain); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for _, c := range added {
		table, chain, _ := strings.Cut(c, "/")
		if _, err := run(ctx, iptables, "-w", "5", "-t", table, "-X", chain); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("remove iptables chains %s: %s", strings.Join(added, ", "), strings.Join(errs, "; "))
	}
	return nil
}

// ruleFields splits a rule as iptables -S prints it into arguments:
// fields separated by spaces, where a double-quoted field (a comment) may
// hold spaces and escaped quotes.
func ruleFields(line string) []string {
	var out []string
	var cur strings.Builder
	inField, quoted := false, false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case quoted && ch == '\\' && i+1 < len(line):
			i++
			cur.WriteByte(line[i])
		case ch == '"':
			quoted, inField = !quoted, true
		case ch == ' ' && !quoted:
			if inField {
				out = append(out, cur.String())
				cur.Reset()
				inField = false
			}
		default:
			cur.WriteByte(ch)
			inField = true
		}
	}
	if inField {
		out = append(out, cur.String())
	}
	return out
}

// bridgeAliasPrefix starts the alias the harness gives its bridge, followed
// by the cluster directory that owns it, so that a bridge left behind by a
// cluster whose processes are gone (its session was killed) can be told
// from one a running cluster uses.
const bridgeAliasPrefix = "rejuv-harness cluster in "

// createBridge creates the bridge of the node's pods with the node's
// address on it.
func createBridge(ctx context.Context, n Node) error {
	cfg := n.cfg
	ip := cfg.Tools.IP
	addr := fmt.Sprintf("%s/%d", n.IP, n.PodSubnet.Bits())
	if _, err := net.InterfaceByName(n.Bridge); err == nil {
		if err := removeLeftBridge(ctx, n); err != nil {
			return err
		}
	}
	steps := [][]string{
		{"link", "add", n.Bridge, "type", "bridge"},
		{"link", "set", n.Bridge, "alias", bridgeAliasPrefix + cfg.Dir},
		{"addr", "add", addr, "dev", n.Bridge},
		{"link", "set", n.Bridge, "up"},
	}
	for _, s := range steps {
		if _, err := run(ctx, ip, s...); err != nil {
			return fmt.Errorf("create bridge %s: %w", n.Bridge, err)
		}
	}
	return nil
}

// removeLeftBridge deletes an existing bridge of the harness's name when no
// running cluster uses it: one whose alias names a cluster directory without
// live processes, or one without an alias (older harnesses set none) that
// carries this cluster's node address. Preflight has already found the
// cluster's ports free, so no cluster of this configuration is running.
// Any other interface of that name is refused.
func removeLeftBridge(ctx context.Context, n Node) error {
	cfg, bridge := n.cfg, n.Bridge
	if _, err := os.Stat(filepath.Join("/sys/class/net", bridge, "bridge")); err != nil {
		return fmt.Errorf("create bridge %s: an interface of that name already exists and is not a bridge; remove it, or give the harness another bridge name", bridge)
	}
	owner, marked := bridgeOwner(bridge)
	switch {
	case marked:
		if st, _ := loadState(owner); st != nil && st.anyAlive() {
			return fmt.Errorf("create bridge %s: the running cluster in %s uses it; stop that cluster first (REJUV_CLUSTER_DIR=%s go run ./test/cluster down)", bridge, owner, owner)
		}
	case !bridgeHasAddress(bridge, n.IP):
		return fmt.Errorf("create bridge %s: a bridge of that name already exists without the node address %s, so it is not a harness cluster's; remove it with: ip link delete %s", bridge, n.IP, bridge)
	default:
		owner = "an unknown directory"
	}
	fmt.Fprintf(cfg.out(), "harness: removing bridge %s left by a cluster that no longer runs (%s)\n", bridge, owner)
	if _, err := run(ctx, cfg.Tools.IP, "link", "delete", bridge); err != nil {
		return fmt.Errorf("remove the left bridge %s: %w", bridge, err)
	}
	return nil
}

// bridgeOwner reads the cluster directory the bridge's alias names; false
// when the alias names none.
func bridgeOwner(bridge string) (string, bool) {
	alias, _ := os.ReadFile(filepath.Join("/sys/class/net", bridge, "ifalias"))
	return strings.CutPrefix(strings.TrimSpace(string(alias)), bridgeAliasPrefix)
}

// bridgeHasAddress reports whether the interface name carries ip.
func bridgeHasAddress(name string, ip netip.Addr) bool {
	iface, err := net.InterfaceByName(name)
	if err != nil {
		return false
	}
	addrs, err := iface.Addrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(net.IP(ip.AsSlice())) {
			return true
		}
	}
	return false
}

// deleteBridge deletes one of the cluster's bridges, unless another
// cluster has since taken the name over (this one's processes died and the
// other removed the left bridge).
func deleteBridge(ctx context.Context, cfg Config, bridge string) error {
	if _, err := net.InterfaceByName(bridge); err != nil {
		return nil
	}
	if owner, marked := bridgeOwner(bridge); marked && owner != cfg.Dir {
		return nil
	}
	if _, err := run(ctx, cfg.Tools.IP, "link", "delete", bridge); err != nil {
		return fmt.Errorf("delete bridge %s: %w", bridge, err)
	}
	return nil
}

// writeCNIConfig writes the node's bridge network: host-local addresses in
// its pod subnet, routes to Services' cluster IPs and to the other nodes'
// pods through the node (where kube-proxy translates the former, and the
// machine routes between the bridges), but no default route and no
// masquerading, so pod traffic never leaves the machine.
func writeCNIConfig(n Node) error {
	cfg, confDir, ipamDir := n.cfg, n.cniConfDir(), n.cniIPAMDir()
	routes := []map[string]string{{"dst": cfg.ServiceSubnet.String()}}
	if cfg.NodeCount > 1 {
		routes = append(routes, map[string]string{"dst": cfg.podRange().String()})
	}
	conf := map[string]any{
		"cniVersion": "1.0.0",
		"name":       "rejuv-harness",
		"plugins": []any{map[string]any{
			"type":        "bridge",
			"bridge":      n.Bridge,
			"isGateway":   true,
			"ipMasq":      false,
			"hairpinMode": true,
			"ipam": map[string]any{
				"type":    "host-local",
				"dataDir": ipamDir,
				"ranges": [][]map[string]string{{{
					"subnet":  n.PodSubnet.String(),
					"gateway": n.IP.String(),
				}}},
				"routes": routes,
			},
		}},
	}
	b, err := json.MarshalIndent(conf, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(confDir, 0o755); err != nil {
		return fmt.Errorf("write CNI config: %w", err)
	}
	if err := os.WriteFile(filepath.Join(confDir, "10-rejuv.conflist"), b, 0o644); err != nil {
		return fmt.Errorf("write CNI config: %w", err)
	}
	return nil
}
