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

// APIServerURL is where the apiserver serves, on the node's address.
func (c Config) APIServerURL() string {
	return "https://" + c.NodeIP().String() + ":" + itoa(c.Ports.APIServer)
}
