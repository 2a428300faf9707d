package harness

import (
	"context"
	"fmt"
	"time"
)

// StopContainerd stops the node's containerd, as a runtime crash or an
// upgrade would; the containers keep running under their shims. Start it
// again with StartNodeContainerd.
func (c *Cluster) StopContainerd() error {
	st, err := loadState(c.Config.Dir)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("stop containerd: no cluster in %s", c.Config.Dir)
	}
	p := st.process("containerd")
	if p == nil {
		return fmt.Errorf("stop containerd: the cluster state has no containerd")
	}
	return p.Stop(10 * time.Second)
}

// StartNodeContainerd starts the node's containerd again with the same
// configuration and waits until its CRI answers; the cluster state records
// the new process, so that Status and Down know it.
func (c *Cluster) StartNodeContainerd(ctx context.Context) error {
	st, err := loadState(c.Config.Dir)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("start containerd: no cluster in %s", c.Config.Dir)
	}
	if p := st.process("containerd"); p != nil && p.Alive() {
		return nil
	}
	sp, err := containerdSpec(c.Config)
	if err != nil {
		return err
	}
	p, err := startProcess(c.Config.logDir(), sp)
	if err != nil {
		return err
	}
	for i, old := range st.Processes {
		if old.Name == "containerd" {
			st.Processes[i] = p
		}
	}
	if err := st.save(c.Config.Dir); err != nil {
		return err
	}
	return p.waitReady(ctx, startTimeout, criReady(c.Config.CRISocket()))
}
