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
		NodeName: "n", Bridge: "rejuvx0", Runtime: RuntimeContainerd2,
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
		{name: "overlapping subnets", change: func(c *Config) { c.ServiceSubnet = netip.MustParsePrefix("10.213.0.128/25") }, wantErr: "must not overlap the pod subnet"},
		{name: "tiny pod subnet", change: func(c *Config) { c.PodSubnet = netip.MustParsePrefix("10.9.9.0/30") }, wantErr: "config.PodSubnet"},
		{name: "port out of range", change: func(c *Config) { c.Ports.Kubelet = 70000 }, wantErr: "config.Ports.Kubelet: 70000 is not a TCP port"},
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
