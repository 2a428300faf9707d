package harness

import (
	"net/netip"
	"path/filepath"
	"strconv"
)

// MaxNodes is how many nodes the harness can start on one machine.
const MaxNodes = 2

// Node is one of the cluster's nodes: a kubelet and a containerd of its
// own, on a bridge and a pod subnet of its own, in the machine's network.
// The first node's kubelet and runtime run in the machine's mount
// namespace. Every other node's run together in a mount namespace of the
// node's (see namespaceStep), where the first node's runtime socket
// directory and /var/lib/kubelet are the node's own directories: a pod on
// that node, Rejuv's daemon among them, finds its own node's runtime at
// the same path as on the first node, as on separate machines.
type Node struct {
	// Name is the name its kubelet registers.
	Name string
	// IP is its InternalIP: its bridge's address, where its kubelet serves.
	IP netip.Addr
	// PodSubnet is the range its pods get addresses from.
	PodSubnet netip.Prefix
	// Bridge is the Linux bridge its pods attach to.
	Bridge string
	// CRISocket is its runtime's socket as the harness, in the machine's
	// mount namespace, reaches it.
	CRISocket string

	index int
	cfg   Config
}

// Nodes are the cluster's nodes, the first one first.
func (c Config) Nodes() []Node {
	nodes := make([]Node, max(1, c.NodeCount))
	for i := range nodes {
		nodes[i] = c.node(i)
	}
	return nodes
}

// FirstNode is the node whose runtime serves the socket at Config's
// CRISocket in the machine's mount namespace.
func (c Config) FirstNode() Node { return c.node(0) }

func (c Config) node(i int) Node {
	n := Node{index: i, cfg: c, Name: c.NodeName, Bridge: c.Bridge, PodSubnet: c.PodSubnet, CRISocket: c.CRISocket()}
	if i > 0 {
		n.Name = c.NodeName + n.suffix()
		n.Bridge = c.Bridge + n.suffix()
		n.PodSubnet = nthSubnet(c.PodSubnet, i)
		n.CRISocket = filepath.Join(n.runDir(), filepath.Base(c.CRISocket()))
	}
	n.IP = n.PodSubnet.Addr().Next()
	return n
}

// nthSubnet is the i-th prefix of first's size from first on.
func nthSubnet(first netip.Prefix, i int) netip.Prefix {
	a := first.Masked().Addr().As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(i) << (32 - first.Bits())
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), first.Bits())
}

// podRange covers every node's pod subnet: kube-proxy's cluster CIDR and
// the route each pod has to the other nodes' pods.
func (c Config) podRange() netip.Prefix {
	bits := c.PodSubnet.Bits()
	for n := 1; n < max(1, c.NodeCount); n *= 2 {
		bits--
	}
	return netip.PrefixFrom(c.PodSubnet.Addr(), bits).Masked()
}

// First says whether this is the first node.
func (n Node) First() bool { return n.index == 0 }

// suffix tells the node's processes, files and names from the first
// node's ("" for the first, "-2" for the second).
func (n Node) suffix() string {
	if n.index == 0 {
		return ""
	}
	return "-" + strconv.Itoa(n.index+1)
}

// Component is the name under which the cluster records one of the
// node's processes (ComponentKubelet or ComponentContainerd), for Stop
// and Start.
func (n Node) Component(component string) string { return component + n.suffix() }

// namespaceProcess is the process that holds the mount namespace of a node
// other than the first.
func (n Node) namespaceProcess() string { return "node" + n.suffix() + "-namespace" }

// path is below the node's own directory: the cluster's for the first
// node, so that its files are where they were before there were two.
func (n Node) path(elem ...string) string {
	if n.index == 0 {
		return n.cfg.path(elem...)
	}
	return n.cfg.path(append([]string{"node" + n.suffix()}, elem...)...)
}

// runDir is the directory that stands, in the node's mount namespace, for
// the directory of the first node's runtime socket.
func (n Node) runDir() string { return n.path("run") }

// varLibKubeletDir stands for /var/lib/kubelet in the node's mount
// namespace.
func (n Node) varLibKubeletDir() string { return n.path("var-lib-kubelet") }

// socketInNode is the runtime's socket as the node's kubelet and pods
// reach it: the first node's path.
func (n Node) socketInNode() string { return n.cfg.CRISocket() }

// containerdDir is the node's containerd's: each runtime keeps its own
// root (image store and metadata), which the other need not read.
func (n Node) containerdDir() string {
	if n.cfg.Runtime == RuntimeContainerd2 {
		return n.path("containerd2")
	}
	return n.path("containerd")
}
func (n Node) cniConfDir() string     { return n.path("cni", "net.d") }
func (n Node) cniIPAMDir() string     { return n.path("cni", "ipam") }
func (n Node) kubeletRootDir() string { return n.path("kubelet") }
func (n Node) podLogsDir() string     { return n.path("pod-logs") }

// registryHostsDir is containerd's config_path: one directory per registry
// host, each with the hosts.toml that says where and how to reach it.
func (n Node) registryHostsDir() string { return filepath.Join(n.containerdDir(), "certs.d") }

// kubeletPorts are where its kubelet serves and answers health checks.
func (n Node) kubeletPorts() (serve, healthz int) {
	if n.index == 0 {
		return n.cfg.Ports.Kubelet, n.cfg.Ports.KubeletHealthz
	}
	return n.cfg.Ports.SecondKubelet, n.cfg.Ports.SecondKubeletHealthz
}

// KubeletPort is where its kubelet serves the API server and Prometheus.
func (n Node) KubeletPort() int {
	serve, _ := n.kubeletPorts()
	return serve
}

// cgroupRoot is where its kubelet puts its pods' cgroups: the first node's
// at the hierarchy's root ("/kubepods"), another's under a cgroup of the
// node's name, which the harness creates, so that neither kubelet takes
// the other's pods for orphans.
func (n Node) cgroupRoot() string {
	if n.index == 0 {
		return ""
	}
	return "/" + n.Name
}

// kubeletCert and kubeletClientCert are the base names of its kubelet's
// serving and client certificates in the PKI directory.
func (n Node) kubeletCert() string       { return "kubelet" + n.suffix() }
func (n Node) kubeletClientCert() string { return "kubelet-client" + n.suffix() }

// kubeletKubeconfig is its kubelet's kubeconfig.
func (n Node) kubeletKubeconfig() string {
	return n.cfg.componentKubeconfig("kubelet" + n.suffix())
}

// PodDir is the kubelet's directory of a pod of the node, where its
// volumes are. Only the first node's volumes are seen from the machine's
// mount namespace: the others' are mounted in their node's.
func (n Node) PodDir(uid string) string { return filepath.Join(n.kubeletRootDir(), "pods", uid) }
