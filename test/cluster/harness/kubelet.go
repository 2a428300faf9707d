package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// kubeletConfig is the KubeletConfiguration for this machine: cgroupfs on
// cgroup v1, swap tolerated, webhook authn/authz, its own directories,
// image garbage collection off so that pulled images stay, and a node
// lease renewed and a status computed every 4 s, so that a node is Ready
// again within seconds of the kubelet's return.
func kubeletConfig(n Node) string {
	c := n.cfg
	serve, healthz := n.kubeletPorts()
	conf := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: %[1]s
port: %[2]d
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: %[3]d
tlsCertFile: %[4]s
tlsPrivateKeyFile: %[5]s
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: %[6]s
authorization:
  mode: Webhook
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[7]s
podLogsDir: %[8]s
resolvConf: ""
clusterDomain: cluster.local
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "100Mi"
  nodefs.available: "1%%"
  nodefs.inodesFree: "1%%"
  imagefs.available: "1%%"
serializeImagePulls: false
rotateCertificates: false
serverTLSBootstrap: false
protectKernelDefaults: false
nodeLeaseDurationSeconds: 16
nodeStatusUpdateFrequency: 4s
`, n.IP, serve, healthz, c.pki(n.kubeletCert()+".crt"), c.pki(n.kubeletCert()+".key"),
		c.pki("ca.crt"), n.socketInNode(), n.podLogsDir())
	if root := n.cgroupRoot(); root != "" {
		conf += "cgroupRoot: " + root + "\n"
	}
	return conf
}

// kubeletSpec is how the node's kubelet starts, in the machine's mount
// namespace; see Node.enter for the other nodes'.
func kubeletSpec(n Node) (spec, error) {
	c := n.cfg
	if err := os.MkdirAll(n.path(), 0o755); err != nil {
		return spec{}, fmt.Errorf("kubelet config of %s: %w", n.Name, err)
	}
	conf := n.path("kubelet-config.yaml")
	if err := os.WriteFile(conf, []byte(kubeletConfig(n)), 0o644); err != nil {
		return spec{}, fmt.Errorf("kubelet config of %s: %w", n.Name, err)
	}
	// The kubelet runs iptables, mount and friends through PATH.
	return spec{name: n.Component(ComponentKubelet), path: c.KubeBinary("kubelet"), env: []string{"PATH=" + c.systemPATH()}, args: c.withExtra("kubelet", []string{
		"--config=" + conf,
		"--kubeconfig=" + n.kubeletKubeconfig(),
		"--hostname-override=" + n.Name,
		"--node-ip=" + n.IP.String(),
		"--root-dir=" + n.kubeletRootDir(),
		"--cert-dir=" + n.path("kubelet-pki"),
		"--v=1",
	})}, nil
}

// systemPATH is the PATH of the node components that run host programs
// (iptables, iptables-restore, mount): the iptables in use first.
func (c Config) systemPATH() string {
	return strings.Join([]string{filepath.Dir(c.Tools.IPTables), "/usr/sbin", "/sbin", os.Getenv("PATH")}, string(os.PathListSeparator))
}

// nodeReady checks that the node is registered and Ready.
func nodeReady(cs kubernetes.Interface, name string) func(context.Context) error {
	return func(ctx context.Context) error {
		node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("node %s: %w", name, err)
		}
		for _, cond := range node.Status.Conditions {
			if cond.Type == corev1.NodeReady {
				if cond.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("node %s not Ready: %s: %s", name, cond.Reason, cond.Message)
			}
		}
		return fmt.Errorf("node %s has no Ready condition yet", name)
	}
}

// defaultServiceAccount checks that the controller manager has created the
// default namespace's ServiceAccount, without which pods are rejected.
func defaultServiceAccount(cs kubernetes.Interface) func(context.Context) error {
	return func(ctx context.Context) error {
		_, err := cs.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err
	}
}
