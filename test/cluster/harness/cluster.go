package harness

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/rejuv-dev/rejuv/test/images"
)

// Cluster is a running instance.
type Cluster struct {
	Config Config
	// Started says whether Up started the cluster (false: it reused a
	// healthy one).
	Started bool
	// Phases are the start-up phases and how long each took.
	Phases []Phase
}

// Phase is one timed part of Up.
type Phase struct {
	Name     string
	Duration time.Duration
}

// Kubeconfig is the admin kubeconfig's path.
func (c *Cluster) Kubeconfig() string { return c.Config.Kubeconfig() }

// PodNetwork is the pods' addresses on every node.
func (c *Cluster) PodNetwork() netip.Prefix { return c.Config.podRange() }

// NodeName is the first node's.
func (c *Cluster) NodeName() string { return c.Config.NodeName }

// CRISocket is the first node's containerd's CRI socket.
func (c *Cluster) CRISocket() string { return c.Config.CRISocket() }

// Nodes are the cluster's nodes, the first one first.
func (c *Cluster) Nodes() []Node { return c.Config.Nodes() }

// Node is the node of that name.
func (c *Cluster) Node(name string) (Node, error) {
	for _, n := range c.Nodes() {
		if n.Name == name {
			return n, nil
		}
	}
	return Node{}, fmt.Errorf("the cluster has no node %q", name)
}

// CRISocketOf is the CRI socket of the named node's containerd, as this
// process reaches it.
func (c *Cluster) CRISocketOf(node string) (string, error) {
	n, err := c.Node(node)
	if err != nil {
		return "", err
	}
	return n.CRISocket, nil
}

// RESTConfig is an admin client configuration, for tests and benchmarks,
// which poll: its clients may make 100 requests a second (200 at once).
// At client-go's default of 5, one clientset shared by the parallel
// end-to-end tests throttled them, not the cluster, and a snapshot of
// every object of the cluster (some 80 requests) took 10 s.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	rc, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
	if err != nil {
		return nil, fmt.Errorf("load kubeconfig %s: %w", c.Kubeconfig(), err)
	}
	rc.QPS, rc.Burst = 100, 200
	return rc, nil
}

// Clientset is an admin clientset.
func (c *Cluster) Clientset() (kubernetes.Interface, error) {
	rc, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(rc)
}

// Up starts the cluster described by cfg, or reuses it when it is already
// running and healthy. A stale instance (dead processes, left-over state) is
// cleaned up first. When any part fails to start, everything started so far
// is stopped and undone before Up returns the error.
func Up(ctx context.Context, cfg Config) (*Cluster, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("cluster config: %w", err)
	}
	if os.Geteuid() != 0 {
		err := errors.New("the cluster needs root: the kubelet, containerd and runc manage cgroups, mounts and network namespaces, and the harness creates a bridge; run as root")
		if missing := cfg.Tools.missing(); len(missing) > 0 {
			err = errors.Join(err, missingToolsError(missing, "and nothing can be installed without root"))
		}
		return nil, err
	}
	if err := os.MkdirAll(cfg.logDir(), 0o755); err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	unlock, err := lockFile(ctx, cfg.path(".lock"))
	if err != nil {
		return nil, fmt.Errorf("lock cluster %s: %w", cfg.Dir, err)
	}
	defer unlock()

	st, err := loadState(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if st != nil {
		// Processes that use the cluster (a soak, a test binary) may
		// stop, pause and restart its parts on purpose: while one runs,
		// the cluster is theirs, however it looks.
		users := liveUsers(cfg.path("users"))
		if len(users) == 0 {
			// A process a run paused and could not continue (it was
			// killed itself) would hold the cluster still: continue
			// them all.
			st.resumeAll()
		}
		why := healthy(ctx, cfg, st)
		if why == nil {
			fmt.Fprintf(cfg.out(), "harness: reusing the running cluster in %s\n", cfg.Dir)
			return &Cluster{Config: cfg}, nil
		}
		if len(users) > 0 {
			return nil, fmt.Errorf("the cluster in %s is not healthy (%w), and processes %v use it (a soak stops and pauses its parts on purpose): not replacing it under them; try again once they end", cfg.Dir, why, users)
		}
		fmt.Fprintf(cfg.out(), "harness: found a stale cluster (%v); cleaning it up\n", why)
		if err := teardown(ctx, cfg, st); err != nil {
			return nil, fmt.Errorf("clean up stale cluster in %s: %w", cfg.Dir, err)
		}
	}

	c := &Cluster{Config: cfg, Started: true}
	if err := c.phase("preflight", func() error { return preflight(ctx, &c.Config) }); err != nil {
		return nil, err
	}
	cfg = c.Config
	st, err = newState(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := c.start(ctx, st); err != nil {
		fmt.Fprintf(cfg.out(), "harness: start failed; stopping everything it started\n")
		if terr := teardown(context.WithoutCancel(ctx), cfg, st); terr != nil {
			err = errors.Join(err, fmt.Errorf("clean up after the failed start: %w", terr))
		}
		return nil, err
	}
	st.Ready = true
	if err := st.save(cfg.Dir); err != nil {
		return nil, err
	}
	c.printSummary()
	return c, nil
}

// preflight installs or finds everything needed and checks the ports, before
// anything is started or changed.
func preflight(ctx context.Context, cfg *Config) error {
	// Containerd 2 is built before the tools are checked: they include its
	// programs.
	if err := ensureRuntime(ctx, *cfg); err != nil {
		return err
	}
	if err := ensureTools(ctx, cfg); err != nil {
		return err
	}
	if err := EnsureKubeBinaries(ctx, *cfg); err != nil {
		return err
	}
	if err := buildRegistry(ctx, *cfg); err != nil {
		return err
	}
	if err := checkRuntimeSocket(ctx, *cfg); err != nil {
		return err
	}
	return checkPorts(*cfg)
}

// checkRuntimeSocket refuses a CRI socket that another runtime serves, and
// removes one that nothing serves any more (left by a crashed run). It runs
// after a stale instance of this cluster was cleaned up, so whatever answers
// there is not this cluster's.
func checkRuntimeSocket(ctx context.Context, cfg Config) error {
	socket := cfg.CRISocket()
	if _, err := os.Stat(socket); err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if criReady(socket)(ctx) == nil {
		return fmt.Errorf("check the runtime socket: a container runtime that is not this cluster's already serves %s; stop it, or set %s to another path", socket, envRuntimeSocket)
	}
	if err := os.Remove(socket); err != nil {
		return fmt.Errorf("remove the stale runtime socket %s: %w", socket, err)
	}
	return nil
}

// newState records the host as it is before anything changes, and clears
// the previous instance's data (the containerd image store is kept).
func newState(ctx context.Context, cfg Config) (*state, error) {
	chains, err := listChains(ctx, cfg.Tools.IPTables)
	if err != nil {
		return nil, err
	}
	st := &state{
		KubernetesVersion: cfg.KubernetesVersion,
		Runtime:           cfg.Runtime,
		Nodes:             cfg.NodeCount,
		StartedAt:         time.Now(),
		Host: hostState{
			Sysctls:        readSysctls(),
			IPTablesChains: chains,
			VarLibKubelet:  exists(varLibKubelet),
		},
	}
	if err := unmountUnder(cfg.Dir); err != nil {
		return nil, err
	}
	clear := []string{cfg.etcdDir(), cfg.pkiDir(), cfg.path("kubeconfigs"), cfg.logDir()}
	create := []string{cfg.logDir(), cfg.path("kubeconfigs")}
	for _, n := range cfg.Nodes() {
		clear = append(clear, n.kubeletRootDir(), n.podLogsDir(), n.path("cni"))
		create = append(create, n.podLogsDir())
		if !n.First() {
			clear = append(clear, n.runDir(), n.varLibKubeletDir())
		}
	}
	for _, d := range clear {
		if err := os.RemoveAll(d); err != nil {
			return nil, fmt.Errorf("clear %s: %w", d, err)
		}
	}
	for _, d := range create {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", d, err)
		}
	}
	return st, st.save(cfg.Dir)
}

// start brings the components up one after the other, recording each in st
// as soon as it exists.
func (c *Cluster) start(ctx context.Context, st *state) error {
	cfg := c.Config
	if err := c.phase("pki", func() error { return writeCredentials(cfg) }); err != nil {
		return err
	}
	if err := c.phase("network", func() error {
		for _, n := range cfg.Nodes() {
			if err := createBridge(ctx, n); err != nil {
				return err
			}
			st.Host.Bridges = append(st.Host.Bridges, n.Bridge)
			if err := st.save(cfg.Dir); err != nil {
				return err
			}
			if err := writeCNIConfig(n); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return err
	}
	steps, err := controlPlaneSteps(cfg)
	if err != nil {
		return err
	}
	for _, s := range append([]step{registryStep(cfg)}, steps...) {
		if err := c.phase(s.spec.name, func() error { return c.startStep(ctx, st, s) }); err != nil {
			return err
		}
	}
	for _, n := range cfg.Nodes() {
		if err := c.phase(n.Component(ComponentContainerd), func() error { return c.startRuntime(ctx, st, n) }); err != nil {
			return err
		}
	}
	// containerd pulls it for the first pod.
	if err := c.phase("pause image", func() error {
		_, err := pushImage(ctx, cfg, images.Pause)
		return err
	}); err != nil {
		return err
	}
	cs, err := c.Clientset()
	if err != nil {
		return err
	}
	for _, n := range cfg.Nodes() {
		if err := c.phase(n.Component(ComponentKubelet), func() error { return c.startKubelet(ctx, st, n, cs) }); err != nil {
			return err
		}
	}
	if err := st.process("kube-controller-manager").waitReady(ctx, startTimeout, defaultServiceAccount(cs)); err != nil {
		return fmt.Errorf("start cluster: %w", err)
	}
	// Services: the API server reaches webhooks through theirs, pods reach
	// the API server through the kubernetes Service.
	return c.phase("kube-proxy", func() error {
		sp, err := kubeProxySpec(cfg)
		if err != nil {
			return err
		}
		healthz := httpCheck(plainClient(), fmt.Sprintf("http://127.0.0.1:%d/healthz", cfg.Ports.KubeProxyHealthz), "")
		return c.startStep(ctx, st, step{spec: sp, ready: healthz})
	})
}

// startRuntime starts the node's containerd; for a node other than the
// first, in the node's mount namespace, which it starts first.
func (c *Cluster) startRuntime(ctx context.Context, st *state, n Node) error {
	if !n.First() {
		if !exists(varLibKubelet) {
			if err := os.MkdirAll(varLibKubelet, 0o755); err != nil {
				return fmt.Errorf("create %s: %w", varLibKubelet, err)
			}
		}
		s, err := namespaceStep(n, st)
		if err != nil {
			return err
		}
		if err := c.startStep(ctx, st, s); err != nil {
			return err
		}
	}
	s, err := runtimeStep(n, st)
	if err != nil {
		return err
	}
	return c.startStep(ctx, st, s)
}

// startKubelet starts the node's kubelet and waits until its node is Ready.
func (c *Cluster) startKubelet(ctx context.Context, st *state, n Node, cs kubernetes.Interface) error {
	if err := createCgroupRoot(n); err != nil {
		return err
	}
	st.Host.KubeletStarted = true
	s, err := kubeletStep(n, st, cs)
	if err != nil {
		return err
	}
	// The kubelet answers its health checks first; its node is Ready once
	// it has posted its first status.
	nodeIsReady := s.ready
	_, port := n.kubeletPorts()
	s.ready = httpCheck(plainClient(), fmt.Sprintf("http://127.0.0.1:%d/healthz", port), "ok")
	if err := c.startStep(ctx, st, s); err != nil {
		return err
	}
	return st.process(s.spec.name).waitReady(ctx, 2*startTimeout, nodeIsReady)
}

// runtimeStep is how the node's containerd starts and when it is ready.
func runtimeStep(n Node, st *state) (step, error) {
	sp, err := containerdSpec(n)
	if err != nil {
		return step{}, err
	}
	if sp, err = n.enter(sp, st); err != nil {
		return step{}, err
	}
	return step{spec: sp, ready: criReady(n.CRISocket)}, nil
}

// kubeletStep is how the node's kubelet starts and when it is ready: its
// node Ready.
func kubeletStep(n Node, st *state, cs kubernetes.Interface) (step, error) {
	sp, err := kubeletSpec(n)
	if err != nil {
		return step{}, err
	}
	if sp, err = n.enter(sp, st); err != nil {
		return step{}, err
	}
	return step{spec: sp, ready: nodeReady(cs, n.Name)}, nil
}

func (c *Cluster) startStep(ctx context.Context, st *state, s step) error {
	p, err := startProcess(c.Config.logDir(), s.spec)
	if err != nil {
		return err
	}
	st.Processes = append(st.Processes, p)
	if err := st.save(c.Config.Dir); err != nil {
		return err
	}
	return p.waitReady(ctx, startTimeout, s.ready)
}

func (c *Cluster) phase(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	d := since(start)
	c.Phases = append(c.Phases, Phase{Name: name, Duration: d})
	if err != nil {
		return fmt.Errorf("start cluster: %s: %w", name, err)
	}
	fmt.Fprintf(c.Config.out(), "harness: %-24s %s\n", name, d)
	return nil
}

func writeCredentials(cfg Config) error {
	if err := writePKI(cfg, cfg.pkiDir()); err != nil {
		return err
	}
	if err := writeAdmissionConfig(cfg); err != nil {
		return err
	}
	server := cfg.APIServerURL()
	kubeconfigs := map[string]string{
		cfg.Kubeconfig(): "admin",
		cfg.componentKubeconfig("controller-manager"): "controller-manager",
		cfg.componentKubeconfig("scheduler"):          "scheduler",
		cfg.componentKubeconfig("kube-proxy"):         "kube-proxy",
	}
	for _, n := range cfg.Nodes() {
		kubeconfigs[n.kubeletKubeconfig()] = n.kubeletClientCert()
	}
	for path, cert := range kubeconfigs {
		if err := writeKubeconfig(path, server, cfg.pkiDir(), cert); err != nil {
			return err
		}
	}
	return nil
}

func (c *Cluster) printSummary() {
	var total time.Duration
	for _, p := range c.Phases {
		total += p.Duration
	}
	cfg := c.Config
	var nodes strings.Builder
	for _, n := range cfg.Nodes() {
		fmt.Fprintf(&nodes, "  node:        %s (InternalIP %s, CRI socket %s)\n", n.Name, n.IP, n.CRISocket)
	}
	fmt.Fprintf(cfg.out(), `harness: cluster ready in %s
  kubeconfig:  %s
%s  apiserver:   %s
  logs:        %s
  try:         kubectl --kubeconfig %s get nodes
`, total.Round(10*time.Millisecond), cfg.Kubeconfig(), nodes.String(), cfg.APIServerURL(), cfg.logDir(), cfg.Kubeconfig())
}

// healthy says why a recorded instance cannot be reused, or nil.
func healthy(ctx context.Context, cfg Config, st *state) error {
	if !st.Ready {
		return errors.New("it never finished starting")
	}
	if st.KubernetesVersion != cfg.KubernetesVersion {
		return fmt.Errorf("it runs Kubernetes %s, not %s", st.KubernetesVersion, cfg.KubernetesVersion)
	}
	if runtime := cmp.Or(st.Runtime, RuntimeContainerd1); runtime != cfg.Runtime {
		return fmt.Errorf("its node runs %s, not %s (%s)", runtime, cfg.Runtime, envRuntime)
	}
	if nodes := max(1, st.Nodes); nodes != cfg.NodeCount {
		return fmt.Errorf("it runs %d nodes, not %d (%s)", nodes, cfg.NodeCount, envNodes)
	}
	var dead []string
	for _, p := range st.Processes {
		if !p.Alive() {
			dead = append(dead, fmt.Sprintf("%s (pid %d)", p.Name, p.PID))
		}
	}
	if len(dead) > 0 {
		return fmt.Errorf("not running: %s", strings.Join(dead, ", "))
	}
	if _, err := os.Stat(cfg.admissionConfig()); err != nil {
		return errors.New("its API server presents no webhook client certificate (a harness from before it did)")
	}
	if st.process("registry") == nil {
		return errors.New("it runs no registry (a harness from before it did)")
	}
	c := &Cluster{Config: cfg}
	cs, err := c.Clientset()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, n := range cfg.Nodes() {
		if err := nodeReady(cs, n.Name)(ctx); err != nil {
			return err
		}
	}
	return nil
}
