package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestChangesSinceTheLastTag: the notes list the commits after the
// previous release's tag, newest first, by their first sentence; the first
// release lists none.
func TestChangesSinceTheLastTag(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q")
	run("commit", "-q", "--allow-empty", "-m", "Start")
	run("commit", "-q", "--allow-empty", "-m", "First feature")
	ctx := context.Background()

	first, err := changesSince(ctx, "HEAD")
	if err != nil || first.Since != "" || first.Subjects != nil {
		t.Errorf("the first release: %+v, %v; want no earlier tag and no changes", first, err)
	}

	run("tag", "v0.1.0")
	run("commit", "-q", "--allow-empty", "-m", "Fix the daemon. It no longer waits; see docs.")
	run("tag", "not-a-release")
	run("commit", "-q", "--allow-empty", "-m", "Add a flag")
	got, err := changesSince(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Add a flag", "Fix the daemon."}; got.Since != "v0.1.0" || !slices.Equal(got.Subjects, want) {
		t.Errorf("changes since v0.1.0: %+v, want since v0.1.0: %q", got, want)
	}

	if _, err := changesSince(ctx, "no-such-commit"); err == nil {
		t.Error("changes up to a commit that does not exist: no error")
	}
}

// TestNotesListTheChanges: RELEASE_NOTES.md says which release the changes
// follow and lists them, or says it is the first.
func TestNotesListTheChanges(t *testing.T) {
	for _, tt := range []struct {
		changes changes
		want    string
	}{
		{changes{Since: "v0.1.0", Subjects: []string{"Add a flag", "Fix the daemon."}}, "## Changes\n\nSince v0.1.0:\n\n- Add a flag\n- Fix the daemon.\n\n## Install"},
		{changes{}, "## Changes\n\nThe first release.\n\n## Install"},
	} {
		o := options{version: "v0.2.0", commit: "abc", registry: "r.example.com", out: t.TempDir(), urlBase: "https://example.com/dl"}
		if err := writeNotes(o, notes{Chart: "rejuv-0.2.0.tgz", Changes: tt.changes}); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(o.out, "RELEASE_NOTES.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(got), tt.want) {
			t.Errorf("release notes with %+v:\n%s\nwant them to contain %q", tt.changes, got, tt.want)
		}
	}
}
