package docgen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rejuv-dev/rejuv/test/cluster/harness"
)

// WriteEnv set to 1 makes Settle write the documents instead of comparing
// them (make docs).
const WriteEnv = "REJUV_WRITE_DOCS"

// Template reads a file of the repository, path relative to its root.
func Template(t *testing.T, path string) string {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Settle writes doc to path (relative to the repository's root) with
// WriteEnv set, and otherwise fails the test when the file holds
// something else.
func Settle(t *testing.T, path, doc string) {
	t.Helper()
	root, err := harness.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(root, path)
	if os.Getenv(WriteEnv) == "1" {
		if err := os.WriteFile(full, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(full)
	if err != nil || string(have) != doc {
		t.Errorf("%s is stale (or missing: %v): run make docs", path, err)
	}
}
