package harness

import (
	"context"
	"fmt"
	"time"
)

// The components a test may stop and start again, as a crash, an upgrade
// or a lost node would: the first node's kubelet and containerd; another
// node's are named by Node.Component.
const (
	ComponentAPIServer  = "kube-apiserver"
	ComponentKubelet    = "kubelet"
	ComponentContainerd = "containerd"
)

// Stop stops one of the cluster's components (ComponentAPIServer,
// ComponentKubelet or ComponentContainerd). The containers keep running
// under their shims. Start it again with Start.
func (c *Cluster) Stop(component string) error {
	st, err := loadState(c.Config.Dir)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("stop %s: no cluster in %s", component, c.Config.Dir)
	}
	p := st.process(component)
	if p == nil {
		return fmt.Errorf("stop %s: the cluster state has no such process", component)
	}
	return p.Stop(10 * time.Second)
}

// Start starts a component again with the same configuration and waits
// until it is ready; the cluster state records the new process, so that
// Status and Down know it.
func (c *Cluster) Start(ctx context.Context, component string) error {
	st, err := loadState(c.Config.Dir)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("start %s: no cluster in %s", component, c.Config.Dir)
	}
	if p := st.process(component); p != nil && p.Alive() {
		return nil
	}
	s, err := c.componentStep(component, st)
	if err != nil {
		return err
	}
	p, err := startProcess(c.Config.logDir(), s.spec)
	if err != nil {
		return err
	}
	for i, old := range st.Processes {
		if old.Name == component {
			st.Processes[i] = p
		}
	}
	if err := st.save(c.Config.Dir); err != nil {
		return err
	}
	return p.waitReady(ctx, startTimeout, s.ready)
}

// componentStep is how a component starts and when it is ready.
func (c *Cluster) componentStep(component string, st *state) (step, error) {
	cfg := c.Config
	if component == ComponentAPIServer {
		steps, err := controlPlaneSteps(cfg)
		if err != nil {
			return step{}, err
		}
		for _, s := range steps {
			if s.spec.name == component {
				return s, nil
			}
		}
	}
	for _, n := range cfg.Nodes() {
		switch component {
		case n.Component(ComponentContainerd):
			return runtimeStep(n, st)
		case n.Component(ComponentKubelet):
			cs, err := c.Clientset()
			if err != nil {
				return step{}, err
			}
			return kubeletStep(n, st, cs)
		}
	}
	return step{}, fmt.Errorf("start %s: not a component the harness restarts", component)
}
