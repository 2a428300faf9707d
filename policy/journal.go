package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Journal keeps, in a directory that outlives the manager's process (an
// emptyDir survives a container's restart), the evaluations that ran past
// their bounds in a step the sandbox cannot stop: if that step kills the
// process (out of memory) or is stopped with it (the liveness probe), the
// restarted manager reads them back and quarantines their policies instead
// of running them again.
type Journal struct {
	dir string
}

// OpenJournal opens (creating it) the journal kept in dir.
func OpenJournal(dir string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open the evaluation journal %s: %w", dir, err)
	}
	return &Journal{dir: dir}, nil
}

// Overrun is an evaluation that ran past its deadline or memory bound in
// one step the sandbox could not stop.
type Overrun struct {
	Namespace  string    `json:"namespace"`
	Name       string    `json:"name"`
	UID        types.UID `json:"uid"`
	Generation int64     `json:"generation"`
	// Rules are the rules being evaluated: one, or all of the policy's
	// when they ran at once.
	Rules []string `json:"rules"`
	Pod   string   `json:"pod"`
	// Why says how far past which bound it ran when it was recorded.
	Why string `json:"why"`
}

// RulesText names the rules of the overrun.
func (o Overrun) RulesText() string { return RulesText(o.Rules) }

// RulesText names the rules of an overrun or a stop: one, or several
// evaluated at once.
func RulesText(rules []string) string {
	if len(rules) == 1 {
		return fmt.Sprintf("rule %q", rules[0])
	}
	return fmt.Sprintf("rules %s (evaluated at once)", strings.Join(rules, ", "))
}

func (j *Journal) path(uid types.UID) string {
	return filepath.Join(j.dir, string(uid)+".json")
}

// Record writes the overrun, replacing an earlier one of its policy.
func (j *Journal) Record(o Overrun) error {
	data, err := json.Marshal(o)
	if err != nil {
		return err
	}
	tmp := j.path(o.UID) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("record the overrun of policy %s/%s: %w", o.Namespace, o.Name, err)
	}
	return os.Rename(tmp, j.path(o.UID))
}

// Left returns the overruns recorded by this process or one before it.
func (j *Journal) Left() ([]Overrun, error) {
	names, err := filepath.Glob(filepath.Join(j.dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Overrun
	var errs []error
	for _, name := range names {
		data, err := os.ReadFile(name)
		var o Overrun
		if err == nil {
			err = json.Unmarshal(data, &o)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("read the evaluation journal's %s: %w", filepath.Base(name), err))
			continue
		}
		out = append(out, o)
	}
	return out, errors.Join(errs...)
}

// Forget removes the overrun of the policy uid, once it is dealt with.
func (j *Journal) Forget(uid types.UID) error {
	if err := os.Remove(j.path(uid)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("forget the overrun of policy %s: %w", uid, err)
	}
	return nil
}
