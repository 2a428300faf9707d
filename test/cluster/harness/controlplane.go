package harness

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

const startTimeout = 60 * time.Second

func (c Config) pki(name string) string { return filepath.Join(c.pkiDir(), name) }

func (c Config) withExtra(name string, args []string) []string {
	return append(args, c.ExtraArgs[name]...)
}

func etcdSpec(c Config) spec {
	client := fmt.Sprintf("http://127.0.0.1:%d", c.Ports.Etcd)
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.Ports.EtcdPeer)
	return spec{name: "etcd", path: c.Tools.Etcd, args: c.withExtra("etcd", []string{
		"--name=rejuv-harness",
		"--data-dir=" + c.etcdDir(),
		"--listen-client-urls=" + client,
		"--advertise-client-urls=" + client,
		"--listen-peer-urls=" + peer,
		"--initial-advertise-peer-urls=" + peer,
		"--initial-cluster=rejuv-harness=" + peer,
		"--listen-metrics-urls=",
		"--quota-backend-bytes=2147483648",
		"--unsafe-no-fsync=true",
	})}
}

func apiserverSpec(c Config) spec {
	return spec{name: "kube-apiserver", path: c.KubeBinary("kube-apiserver"), args: c.withExtra("kube-apiserver", []string{
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", c.Ports.Etcd),
		"--bind-address=" + c.NodeIP().String(),
		"--advertise-address=" + c.NodeIP().String(),
		fmt.Sprintf("--secure-port=%d", c.Ports.APIServer),
		"--tls-cert-file=" + c.pki("apiserver.crt"),
		"--tls-private-key-file=" + c.pki("apiserver.key"),
		"--client-ca-file=" + c.pki("ca.crt"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.pki("sa.pub"),
		"--service-account-signing-key-file=" + c.pki("sa.key"),
		"--service-cluster-ip-range=" + c.ServiceSubnet.String(),
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--admission-control-config-file=" + c.admissionConfig(),
		"--allow-privileged=true",
		"--kubelet-client-certificate=" + c.pki("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + c.pki("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority=" + c.pki("ca.crt"),
		"--kubelet-preferred-address-types=InternalIP",
		"--requestheader-client-ca-file=" + c.pki("front-proxy-ca.crt"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--proxy-client-cert-file=" + c.pki("front-proxy-client.crt"),
		"--proxy-client-key-file=" + c.pki("front-proxy-client.key"),
		"--profiling=false",
		"--v=1",
	})}
}

func controllerManagerSpec(c Config) spec {
	return spec{name: "kube-controller-manager", path: c.KubeBinary("kube-controller-manager"), args: c.withExtra("kube-controller-manager",
		append(clientComponentArgs(c, "controller-manager", c.Ports.ControllerManager),
			"--service-account-private-key-file="+c.pki("sa.key"),
			"--root-ca-file="+c.pki("ca.crt"),
			"--cluster-signing-cert-file="+c.pki("ca.crt"),
			"--cluster-signing-key-file="+c.pki("ca.key"),
			"--use-service-account-credentials=true",
			// Kubernetes' own default (50 s in 1.37): a node is NotReady once
			// its kubelet has not been heard of for 50 s. A shorter grace
			// (20 s here before) is shorter than the components need to
			// come back after the API server restarts (their watches back
			// off while it is away, then meet a few seconds of "forbidden"
			// until its RBAC cache is filled): the controller manager's
			// view of the node goes stale, and it marked the node and every
			// pod on it NotReady although the kubelet never stopped.
			"--node-monitor-grace-period=50s",
			"--node-monitor-period=2s",
			// Its controllers write faster than the default 20 requests a
			// second, so that the scale benchmark's thousands of pods
			// exist in a minute, not in ten.
			"--kube-api-qps=200",
			"--kube-api-burst=400",
		))}
}

func schedulerSpec(c Config) spec {
	return spec{name: "kube-scheduler", path: c.KubeBinary("kube-scheduler"), args: c.withExtra("kube-scheduler",
		clientComponentArgs(c, "scheduler", c.Ports.Scheduler))}
}

// clientComponentArgs are the flags the controller manager and the scheduler
// share: their kubeconfig for everything, a secure port on loopback with a
// self-signed certificate in their own folder, and no leader election.
func clientComponentArgs(c Config, name string, port int) []string {
	kc := c.componentKubeconfig(name)
	return []string{
		"--kubeconfig=" + kc,
		"--authentication-kubeconfig=" + kc,
		"--authorization-kubeconfig=" + kc,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir=" + c.path(name),
		"--leader-elect=false",
		"--profiling=false",
		"--v=1",
	}
}

// controlPlaneSteps are the control plane's components in start order with
// the checks that say each is ready.
func controlPlaneSteps(c Config) ([]step, error) {
	admin, err := adminClient(c)
	if err != nil {
		return nil, fmt.Errorf("admin client: %w", err)
	}
	return []step{
		{spec: etcdSpec(c), ready: httpCheck(plainClient(), fmt.Sprintf("http://127.0.0.1:%d/health", c.Ports.Etcd), `"health":"true"`)},
		{spec: apiserverSpec(c), ready: httpCheck(admin, c.APIServerURL()+"/readyz", "")},
		{spec: controllerManagerSpec(c), ready: httpCheck(insecureClient(), fmt.Sprintf("https://127.0.0.1:%d/healthz", c.Ports.ControllerManager), "")},
		{spec: schedulerSpec(c), ready: httpCheck(insecureClient(), fmt.Sprintf("https://127.0.0.1:%d/healthz", c.Ports.Scheduler), "")},
	}, nil
}

// step is one component to start and the check that it is ready.
type step struct {
	spec  spec
	ready func(context.Context) error
}
