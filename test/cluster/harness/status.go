package harness

import (
	"context"
	"fmt"
	"strings"
)

// Status describes the instance: its processes and whether the node is
// Ready. It changes nothing.
func Status(ctx context.Context, cfg Config) (string, error) {
	st, err := loadState(cfg.Dir)
	if err != nil {
		return "", err
	}
	if st == nil {
		return fmt.Sprintf("no cluster in %s (run: make up)\n", cfg.Dir), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "cluster in %s, Kubernetes %s, started %s\n", cfg.Dir, st.KubernetesVersion, st.StartedAt.Format("2006-01-02 15:04:05"))
	for _, p := range st.Processes {
		s := "running"
		if !p.Alive() {
			s = "NOT RUNNING"
		}
		fmt.Fprintf(&b, "  %-24s pid %-7d %s  log %s\n", p.Name, p.PID, s, p.Log)
	}
	if err := healthy(ctx, cfg, st); err != nil {
		fmt.Fprintf(&b, "unhealthy: %v\n", err)
	} else {
		fmt.Fprintf(&b, "healthy\n  kubeconfig: %s\n", cfg.Kubeconfig())
		for _, n := range cfg.Nodes() {
			fmt.Fprintf(&b, "  node %s Ready, CRI socket %s\n", n.Name, n.CRISocket)
		}
	}
	return b.String(), nil
}
