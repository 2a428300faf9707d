package harness

import (
	"errors"
	"fmt"
	"syscall"
)

// ComponentEtcd is the control plane's etcd: paused, every API request
// that reads or writes waits, as on a slow or overloaded disk.
const ComponentEtcd = "etcd"

// Pause stops one of the cluster's processes (a component name, or etcd)
// with SIGSTOP, as a machine too loaded to schedule it would: it keeps its
// state and its connections, and answers nothing until Resume. A process
// that is not running is an error.
func (c *Cluster) Pause(component string) error {
	return c.signal(component, syscall.SIGSTOP)
}

// Resume continues a process Pause stopped (SIGCONT); resuming one that
// runs does nothing.
func (c *Cluster) Resume(component string) error {
	return c.signal(component, syscall.SIGCONT)
}

func (c *Cluster) signal(component string, sig syscall.Signal) error {
	st, err := loadState(c.Config.Dir)
	if err != nil {
		return err
	}
	if st == nil {
		return fmt.Errorf("signal %s: no cluster in %s", component, c.Config.Dir)
	}
	p := st.process(component)
	if !p.Alive() {
		return fmt.Errorf("signal %s %s: it is not running", component, sig)
	}
	if err := syscall.Kill(p.PID, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s (pid %d) %s: %w", component, p.PID, sig, err)
	}
	return nil
}

// resumeAll continues every process of the state that runs: one left
// paused answers nothing.
func (s *state) resumeAll() {
	for _, p := range s.Processes {
		if p.Alive() {
			_ = syscall.Kill(p.PID, syscall.SIGCONT)
		}
	}
}
