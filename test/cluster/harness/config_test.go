package harness

import (
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func validConfig(t *testing.T) Config {
	t.Helper()
	dir := t.TempDir()
	return Config{
		Dir: filepath.Join(dir, "c"), CacheDir: filepath.Join(dir, "cache"),
		NodeCount: 2, NodeName: "n", Bridge: "rejuvx0", Runtime: RuntimeContainerd2,
		PodSubnet: DefaultPodSubnet, ServiceSubnet: DefaultServiceSubnet, Ports: DefaultPorts,
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string
	}{
		{name: "valid", change: func(*Config) {}},
		{name: "unknown runtime", change: func(c *Config) { c.Runtime = "cri-o" }, wantErr: `config.Runtime (REJUV_RUNTIME): "cri-o" is not "containerd1" or "containerd2"`},
		{name: "relative dir", change: func(c *Config) { c.Dir = "rel" }, wantErr: `config.Dir: "rel" must be an absolute path`},
		{name: "long bridge name", change: func(c *Config) { c.Bridge = "a-very-long-bridge" }, wantErr: "config.Bridge"},
		{name: "overlapping subnets", change: func(c *Config) { c.ServiceSubnet = netip.MustParsePrefix("10.213.0.128/25") }, wantErr: "must not overlap the pods' subnets"},
		{name: "tiny pod subnet", change: func(c *Config) { c.PodSubnet = netip.MustParsePrefix("10.9.9.0/30") }, wantErr: "config.PodSubnet"},
		{name: "port out of range", change: func(c *Config) { c.Ports.Kubelet = 70000 }, wantErr: "config.Ports.Kubelet: 70000 is not a TCP port"},
		{name: "three nodes", change: func(c *Config) { c.NodeCount = 3 }, wantErr: "config.NodeCount (REJUV_NODES): 3 is not 1 to 2"},
		{name: "second node's subnet outside the range", change: func(c *Config) { c.PodSubnet = netip.MustParsePrefix("10.9.1.0/24") },
			wantErr: "config.PodSubnet: 10.9.1.0/24 must start a range of 2 such prefixes (10.9.0.0/23), one per node"},
		{name: "one node's subnet may be anywhere", change: func(c *Config) { c.NodeCount, c.PodSubnet = 1, netip.MustParsePrefix("10.9.1.0/24") }},
		{name: "second kubelet's port taken", change: func(c *Config) { c.Ports.SecondKubelet = c.Ports.Kubelet }, wantErr: "config.Ports.SecondKubelet: 10250 is also used for Kubelet"},
		{name: "port used twice", change: func(c *Config) { c.Ports.Scheduler = c.Ports.APIServer }, wantErr: "config.Ports.Scheduler: 16443 is also used for APIServer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := validConfig(t)
			tt.change(&c)
			err := c.validate()
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestNodeIPIsFirstAddressOfPodSubnet(t *testing.T) {
	c := Config{PodSubnet: netip.MustParsePrefix("10.1.2.0/24")}
	if got := c.NodeIP().String(); got != "10.1.2.1" {
		t.Fatalf("NodeIP() = %s, want 10.1.2.1", got)
	}
}

func TestKubernetesVersionReadsBuildModule(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	v, err := kubernetesVersion(filepath.Join(root, "test", "cluster", "kubebuild", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(v, "v1.") {
		t.Fatalf("version = %q, want v1.x", v)
	}

	bad := filepath.Join(t.TempDir(), "go.mod")
	if err := os.WriteFile(bad, []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := kubernetesVersion(bad); err == nil || !strings.Contains(err.Error(), "does not require k8s.io/kubernetes") {
		t.Fatalf("kubernetesVersion(no require) = %v, want a clear error", err)
	}
}

func TestVersionLDFlagsStampsComponentBase(t *testing.T) {
	got := versionLDFlags("v1.37.1")
	for _, want := range []string{
		"-X k8s.io/component-base/version.gitVersion=v1.37.1",
		"-X k8s.io/component-base/version.gitMajor=1",
		"-X k8s.io/component-base/version.gitMinor=37",
		"-X k8s.io/client-go/pkg/version.gitVersion=v1.37.1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("versionLDFlags() = %q, lacks %q", got, want)
		}
	}
}

func TestRuleFieldsKeepsQuotedComments(t *testing.T) {
	for _, tt := range []struct {
		line string
		want []string
	}{
		{`-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES`,
			[]string{"-A", "OUTPUT", "-m", "comment", "--comment", "kubernetes service portals", "-j", "KUBE-SERVICES"}},
		{`-A KUBE-FIREWALL ! -s 127.0.0.0/8 -d 127.0.0.0/8 -m comment --comment "block \"incoming\" localnet" -j DROP`,
			[]string{"-A", "KUBE-FIREWALL", "!", "-s", "127.0.0.0/8", "-d", "127.0.0.0/8", "-m", "comment", "--comment", `block "incoming" localnet`, "-j", "DROP"}},
		{`-N KUBE-SERVICES`, []string{"-N", "KUBE-SERVICES"}},
		{``, nil},
	} {
		if got := ruleFields(tt.line); !slices.Equal(got, tt.want) {
			t.Errorf("ruleFields(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

// TestTheSecondNodeHasItsOwnEverything: the second node has its own name,
// bridge, next pod subnet and address, socket, directories, ports,
// certificates and cgroup, and the pods' routes and kube-proxy's range
// cover both nodes' subnets.
func TestTheSecondNodeHasItsOwnEverything(t *testing.T) {
	c := validConfig(t)
	c.RuntimeSocket = DefaultRuntimeSocket
	nodes := c.Nodes()
	if len(nodes) != 2 {
		t.Fatalf("%d nodes, want 2", len(nodes))
	}
	first, second := nodes[0], nodes[1]
	if first.Name != "n" || first.Bridge != "rejuvx0" || first.IP.String() != "10.213.0.1" || first.CRISocket != DefaultRuntimeSocket || first.KubeletPort() != 10250 || first.cgroupRoot() != "" {
		t.Errorf("first node %+v (kubelet port %d, cgroup %q)", first, first.KubeletPort(), first.cgroupRoot())
	}
	if second.Name != "n-2" || second.Bridge != "rejuvx0-2" || second.PodSubnet.String() != "10.213.1.0/24" || second.IP.String() != "10.213.1.1" ||
		second.CRISocket != filepath.Join(c.Dir, "node-2", "run", "containerd.sock") || second.socketInNode() != DefaultRuntimeSocket ||
		second.KubeletPort() != 10260 || second.cgroupRoot() != "/n-2" || second.kubeletCert() != "kubelet-2" || second.Component(ComponentKubelet) != "kubelet-2" {
		t.Errorf("second node %+v (in-node socket %s, kubelet port %d, cgroup %q, cert %s)", second, second.socketInNode(), second.KubeletPort(), second.cgroupRoot(), second.kubeletCert())
	}
	if first.containerdDir() == second.containerdDir() || first.kubeletRootDir() == second.kubeletRootDir() || first.cniIPAMDir() == second.cniIPAMDir() {
		t.Errorf("the nodes share directories: %s %s %s", second.containerdDir(), second.kubeletRootDir(), second.cniIPAMDir())
	}
	if r := c.podRange().String(); r != "10.213.0.0/23" {
		t.Errorf("pod range %s, want 10.213.0.0/23", r)
	}
}
