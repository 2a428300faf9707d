package harness

import (
	"fmt"
	"os"
)

// kubeProxyConfig is the KubeProxyConfiguration for this machine, one
// kube-proxy for every node (they share its network): iptables mode, node
// ports only on the pod bridges (never on the machine's own interfaces), and conntrack left as the kernel has it, because the harness
// may not change it.
func kubeProxyConfig(c Config) string {
	return fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]s
hostnameOverride: %[2]s
clusterCIDR: %[3]s
mode: iptables
detectLocalMode: ClusterCIDR
nodePortAddresses: [%[3]s]
healthzBindAddress: 127.0.0.1:%[4]d
metricsBindAddress: 127.0.0.1:%[5]d
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
iptables:
  minSyncPeriod: 0s
  syncPeriod: 30s
`, c.componentKubeconfig("kube-proxy"), c.NodeName, c.podRange(), c.Ports.KubeProxyHealthz, c.Ports.KubeProxyMetrics)
}

func kubeProxySpec(c Config) (spec, error) {
	conf := c.path("kube-proxy-config.yaml")
	if err := os.WriteFile(conf, []byte(kubeProxyConfig(c)), 0o644); err != nil {
		return spec{}, fmt.Errorf("kube-proxy config: %w", err)
	}
	// kube-proxy runs iptables-restore and iptables-save through PATH.
	return spec{name: "kube-proxy", path: c.KubeBinary("kube-proxy"), env: []string{"PATH=" + c.systemPATH()}, args: c.withExtra("kube-proxy", []string{
		"--config=" + conf,
		"--v=1",
	})}, nil
}
