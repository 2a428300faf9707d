package harness

import "path/filepath"

// Paths inside an instance directory.
func (c Config) path(elem ...string) string {
	return filepath.Join(append([]string{c.Dir}, elem...)...)
}

func (c Config) pkiDir() string  { return c.path("pki") }
func (c Config) logDir() string  { return c.path("logs") }
func (c Config) etcdDir() string { return c.path("etcd") }

// Kubeconfig is the admin kubeconfig of the instance.
func (c Config) Kubeconfig() string { return c.path("admin.kubeconfig") }

func (c Config) componentKubeconfig(name string) string {
	return c.path("kubeconfigs", name+".kubeconfig")
}

// CRISocket is the containerd socket the kubelet (and Rejuv's daemon) use:
// RuntimeSocket, or one in the instance directory.
func (c Config) CRISocket() string {
	if c.RuntimeSocket != "" {
		return c.RuntimeSocket
	}
	return c.path("containerd", "containerd.sock")
}

// containerdDir is containerd's: each runtime keeps its own root (image
// store and metadata), which the other need not read.
func (c Config) containerdDir() string {
	if c.Runtime == RuntimeContainerd2 {
		return c.path("containerd2")
	}
	return c.path("containerd")
}
func (c Config) cniConfDir() string     { return c.path("cni", "net.d") }
func (c Config) cniIPAMDir() string     { return c.path("cni", "ipam") }
func (c Config) kubeletRootDir() string { return c.path("kubelet") }
func (c Config) podLogsDir() string     { return c.path("pod-logs") }

// APIServerURL is where the apiserver serves, on the node's address.
func (c Config) APIServerURL() string {
	return "https://" + c.NodeIP().String() + ":" + itoa(c.Ports.APIServer)
}
