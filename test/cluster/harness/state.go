package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// state is what an instance has done to the machine, written after every
// step of Up so that Down (or the next Up, finding it stale) can undo exactly
// that, even after a crash halfway.
type state struct {
	KubernetesVersion string `json:"kubernetesVersion"`
	// Runtime is Config.Runtime; empty in a state from before it, whose
	// node ran RuntimeContainerd1.
	Runtime string `json:"runtime,omitempty"`
	// Nodes is Config.NodeCount; 0 in a state from before it, of one node.
	Nodes     int        `json:"nodes,omitempty"`
	StartedAt time.Time  `json:"startedAt"`
	Ready     bool       `json:"ready"`
	Processes []*Process `json:"processes"`
	Host      hostState  `json:"host"`
}

// hostState records host changes and what was there before them.
type hostState struct {
	// BridgeCreated is set by a harness from before Bridges, which
	// created Config.Bridge.
	BridgeCreated bool `json:"bridgeCreated,omitempty"`
	// Bridges are the nodes' bridges the harness created.
	Bridges        []string          `json:"bridges,omitempty"`
	Sysctls        map[string]string `json:"sysctls,omitempty"`
	IPTablesChains []string          `json:"iptablesChains,omitempty"`
	KubeletStarted bool              `json:"kubeletStarted"`
	VarLibKubelet  bool              `json:"varLibKubeletExisted"`
}

func statePath(dir string) string { return filepath.Join(dir, "state.json") }

// loadState returns nil, nil when the instance has no state (never started,
// or cleanly stopped).
func loadState(dir string) (*state, error) {
	b, err := os.ReadFile(statePath(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read cluster state: %w", err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("read cluster state %s: %w", statePath(dir), err)
	}
	return &s, nil
}

func (s *state) save(dir string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := statePath(dir) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write cluster state: %w", err)
	}
	return os.Rename(tmp, statePath(dir))
}

func (s *state) process(name string) *Process {
	for _, p := range s.Processes {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// anyAlive reports whether any process the instance started still runs.
func (s *state) anyAlive() bool {
	for _, p := range s.Processes {
		if p.Alive() {
			return true
		}
	}
	return false
}
