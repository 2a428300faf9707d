package harness

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Ports are the TCP ports the cluster's components listen on. All of them
// are checked before anything starts.
type Ports struct {
	Etcd              int
	EtcdPeer          int
	APIServer         int
	ControllerManager int
	Scheduler         int
	Kubelet           int
	KubeletHealthz    int
	// SecondKubelet and SecondKubeletHealthz are the second node's
	// kubelet's (see Config.NodeCount).
	SecondKubelet        int
	SecondKubeletHealthz int
	KubeProxyHealthz     int
	KubeProxyMetrics     int
	// Registry is the cluster's registry's (see Config.Registry).
	Registry int
}

// Config describes one cluster instance. The zero value is not usable; start
// from DefaultConfig.
type Config struct {
	// Dir holds the instance's state: PKI, kubeconfigs, data, logs.
	Dir string
	// CacheDir holds the Kubernetes binaries built for each version.
	CacheDir string
	// KubeBuildDir is the separate Go module that builds the Kubernetes
	// binaries.
	KubeBuildDir string
	// ProgramsBuildDir is the separate Go module that builds the programs
	// the tests need beside the cluster (helm, metrics-server, kwok,
	// krew): KubeBuildDir when it runs the newest Kubernetes, which builds
	// them in the same go build.
	ProgramsBuildDir string
	// KubernetesVersion is the k8s.io/kubernetes version required by KubeBuildDir.
	KubernetesVersion string
	// Runtime is the nodes' container runtime: RuntimeContainerd1 or
	// RuntimeContainerd2, built from the module in RuntimeBuildDir.
	Runtime string
	// RuntimeBuildDir is the separate Go module that builds the runtime.
	RuntimeBuildDir string
	// NodeCount is how many nodes run (1 to MaxNodes); see Nodes.
	NodeCount int
	// NodeName is the name the first node's kubelet registers; the
	// others' add "-2" and so on.
	NodeName string
	// Bridge is the Linux bridge the harness creates for the first node's
	// pods (the others' add "-2" and so on); its first address in
	// PodSubnet is the node's InternalIP and the apiserver's advertise and
	// bind address.
	Bridge string
	// PodSubnet is the range the first node's pods get addresses from;
	// each other node takes the next range of its size.
	PodSubnet netip.Prefix
	// ServiceSubnet is the apiserver's service cluster IP range.
	ServiceSubnet netip.Prefix
	// RuntimeSocket is containerd's CRI socket; empty puts it in Dir. The
	// shared cluster uses containerd's well-known path, where Rejuv's
	// daemon, installed as users install it, finds the runtime of a real
	// node.
	RuntimeSocket string
	Ports         Ports
	// ExtraArgs adds command-line arguments per component name (etcd,
	// kube-apiserver, kube-controller-manager, kube-scheduler, containerd,
	// kubelet, kube-proxy).
	ExtraArgs map[string][]string
	// Tools names the host programs the harness runs; see DefaultTools.
	Tools Tools
	// Out receives progress lines; nil means os.Stderr.
	Out io.Writer
}

// Default addresses and ports. They avoid the well-known Kubernetes ports so
// that the harness does not collide with another cluster on the machine.
var (
	DefaultPodSubnet     = netip.MustParsePrefix("10.213.0.0/24")
	DefaultServiceSubnet = netip.MustParsePrefix("10.213.128.0/24")
	DefaultPorts         = Ports{
		Etcd:                 22379,
		EtcdPeer:             22380,
		APIServer:            16443,
		ControllerManager:    20257,
		Scheduler:            20259,
		Kubelet:              10250,
		KubeletHealthz:       20248,
		SecondKubelet:        10260,
		SecondKubeletHealthz: 20258,
		KubeProxyHealthz:     20256,
		KubeProxyMetrics:     20249,
		Registry:             20500,
	}
)

const (
	// DefaultNodeName is the node the harness's kubelet registers.
	DefaultNodeName = "rejuv-node"
	// DefaultBridge is the bridge pods attach to.
	DefaultBridge = "rejuv0"
	// envClusterDir overrides the instance directory.
	envClusterDir = "REJUV_CLUSTER_DIR"
	// envCacheDir overrides where built Kubernetes binaries are kept.
	envCacheDir = "REJUV_CACHE_DIR"
	// envNodes overrides how many nodes the shared cluster runs.
	envNodes = "REJUV_NODES"
	// envRuntimeSocket overrides where the shared cluster's containerd
	// listens.
	envRuntimeSocket = "REJUV_CRI_SOCKET"
	// DefaultRuntimeSocket is containerd's well-known CRI socket.
	DefaultRuntimeSocket = "/run/containerd/containerd.sock"
)

// The Kubernetes versions a cluster can run (REJUV_KUBERNETES), each
// pinned by its build module.
const (
	// KubernetesNewest is the newest release Rejuv supports, the default,
	// pinned by test/cluster/kubebuild.
	KubernetesNewest = "newest"
	// KubernetesOldest is the oldest release Rejuv supports, pinned by
	// test/cluster/kubebuild-oldest, whose nodes run containerd 1.7 by
	// default (the compatibility run, make test-compat).
	KubernetesOldest = "oldest"

	envKubernetes = "REJUV_KUBERNETES"
)

// DefaultConfig returns the configuration of the project's shared local
// cluster: state in <repo>/.cache/cluster, binaries in <repo>/.cache,
// containerd's socket at its well-known path, the newest Kubernetes Rejuv
// supports on two nodes with containerd 2; overridable with
// REJUV_CLUSTER_DIR, REJUV_CACHE_DIR, REJUV_CRI_SOCKET, REJUV_KUBERNETES,
// REJUV_RUNTIME and REJUV_NODES.
func DefaultConfig() (Config, error) {
	root, err := RepoRoot()
	if err != nil {
		return Config{}, err
	}
	clusterDir := filepath.Join(root, "test", "cluster")
	programsBuild := filepath.Join(clusterDir, "kubebuild")
	kubeBuild, runtime := programsBuild, RuntimeContainerd2
	switch k := envOr(envKubernetes, KubernetesNewest); k {
	case KubernetesNewest:
	case KubernetesOldest:
		kubeBuild, runtime = filepath.Join(clusterDir, "kubebuild-oldest"), RuntimeContainerd1
	default:
		return Config{}, fmt.Errorf("%s: %q is not %q or %q", envKubernetes, k, KubernetesNewest, KubernetesOldest)
	}
	version, err := kubernetesVersion(filepath.Join(kubeBuild, "go.mod"))
	if err != nil {
		return Config{}, err
	}
	cfg := Config{
		Dir:               envOr(envClusterDir, filepath.Join(root, ".cache", "cluster")),
		CacheDir:          envOr(envCacheDir, filepath.Join(root, ".cache")),
		KubeBuildDir:      kubeBuild,
		ProgramsBuildDir:  programsBuild,
		KubernetesVersion: version,
		Runtime:           envOr(envRuntime, runtime),
		NodeCount:         MaxNodes,
		NodeName:          DefaultNodeName,
		Bridge:            DefaultBridge,
		PodSubnet:         DefaultPodSubnet,
		ServiceSubnet:     DefaultServiceSubnet,
		RuntimeSocket:     envOr(envRuntimeSocket, DefaultRuntimeSocket),
		Ports:             DefaultPorts,
		Tools:             DefaultTools(),
	}
	if v := os.Getenv(envNodes); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return Config{}, fmt.Errorf("%s: %q is not a number of nodes", envNodes, v)
		}
		cfg.NodeCount = n
	}
	if err := cfg.useRuntime(clusterDir); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// NodeIP is the first node's InternalIP: its bridge's address, owned by
// the harness.
func (c Config) NodeIP() netip.Addr { return c.FirstNode().IP }

// validate reports every problem with the configuration at once.
func (c Config) validate() error {
	var errs []error
	if c.Dir == "" || !filepath.IsAbs(c.Dir) {
		errs = append(errs, fmt.Errorf("config.Dir: %q must be an absolute path", c.Dir))
	}
	if c.CacheDir == "" || !filepath.IsAbs(c.CacheDir) {
		errs = append(errs, fmt.Errorf("config.CacheDir: %q must be an absolute path", c.CacheDir))
	}
	if c.Runtime != RuntimeContainerd1 && c.Runtime != RuntimeContainerd2 {
		errs = append(errs, fmt.Errorf("config.Runtime (%s): %q is not %q or %q", envRuntime, c.Runtime, RuntimeContainerd1, RuntimeContainerd2))
	}
	if c.NodeName == "" {
		errs = append(errs, errors.New("config.NodeName: must not be empty"))
	}
	if c.NodeCount < 1 || c.NodeCount > MaxNodes {
		errs = append(errs, fmt.Errorf("config.NodeCount (%s): %d is not 1 to %d", envNodes, c.NodeCount, MaxNodes))
	}
	if last := c.Bridge + c.node(max(1, c.NodeCount)-1).suffix(); len(c.Bridge) == 0 || len(last) > 15 {
		errs = append(errs, fmt.Errorf("config.Bridge: %q (and %q) must be 1 to 15 characters (a Linux interface name)", c.Bridge, last))
	}
	if !c.PodSubnet.IsValid() || !c.PodSubnet.Addr().Is4() || c.PodSubnet.Bits() > 28 {
		errs = append(errs, fmt.Errorf("config.PodSubnet: %v must be an IPv4 prefix of /28 or larger", c.PodSubnet))
	} else if r := c.podRange(); r.Addr() != c.PodSubnet.Addr() {
		errs = append(errs, fmt.Errorf("config.PodSubnet: %v must start a range of %d such prefixes (%v), one per node", c.PodSubnet, c.NodeCount, r))
	}
	if !c.ServiceSubnet.IsValid() || (c.PodSubnet.IsValid() && c.ServiceSubnet.Overlaps(c.podRange())) {
		errs = append(errs, fmt.Errorf("config.ServiceSubnet: %v must be valid and must not overlap the pods' subnets %v", c.ServiceSubnet, c.podRange()))
	}
	seen := map[int]string{}
	for _, p := range c.portList() {
		if p.port <= 0 || p.port > 65535 {
			errs = append(errs, fmt.Errorf("config.Ports.%s: %d is not a TCP port", p.field, p.port))
			continue
		}
		if other, ok := seen[p.port]; ok {
			errs = append(errs, fmt.Errorf("config.Ports.%s: %d is also used for %s", p.field, p.port, other))
		}
		seen[p.port] = p.field
	}
	return errors.Join(errs...)
}

type namedPort struct {
	field     string
	component string
	port      int
}

func (c Config) portList() []namedPort {
	p := c.Ports
	ports := []namedPort{
		{"Etcd", "etcd", p.Etcd},
		{"EtcdPeer", "etcd", p.EtcdPeer},
		{"APIServer", "kube-apiserver", p.APIServer},
		{"ControllerManager", "kube-controller-manager", p.ControllerManager},
		{"Scheduler", "kube-scheduler", p.Scheduler},
		{"Kubelet", "kubelet", p.Kubelet},
		{"KubeletHealthz", "kubelet", p.KubeletHealthz},
		{"KubeProxyHealthz", "kube-proxy", p.KubeProxyHealthz},
		{"KubeProxyMetrics", "kube-proxy", p.KubeProxyMetrics},
		{"Registry", "registry", p.Registry},
	}
	if c.NodeCount > 1 {
		ports = append(ports, namedPort{"SecondKubelet", "kubelet-2", p.SecondKubelet}, namedPort{"SecondKubeletHealthz", "kubelet-2", p.SecondKubeletHealthz})
	}
	return ports
}

func (c Config) out() io.Writer {
	if c.Out == nil {
		return os.Stderr
	}
	return c.Out
}

// RepoRoot finds the Rejuv repository by walking up from the working
// directory to the go.mod of module github.com/rejuv-dev/rejuv.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && regexp.MustCompile(`(?m)^module github\.com/rejuv-dev/rejuv\s*$`).Match(data) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("find repository root: no go.mod of module github.com/rejuv-dev/rejuv above %s", dir)
		}
	}
}

// kubernetesVersion reads the k8s.io/kubernetes version the build module pins.
func kubernetesVersion(goMod string) (string, error) {
	return requiredVersion(goMod, "k8s.io/kubernetes")
}

// requiredVersion reads the version of module that the go.mod file goMod
// requires.
func requiredVersion(goMod, module string) (string, error) {
	data, err := os.ReadFile(goMod)
	if err != nil {
		return "", fmt.Errorf("read the version of %s: %w", module, err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + `\s+(v\S+)`).FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("read the version of %s: %s does not require %s", module, goMod, module)
	}
	return string(m[1]), nil
}

func envOr(key, fallback string) string {
	if v := strings.TrimSpace(os.Getenv(key)); v != "" {
		return v
	}
	return fallback
}
