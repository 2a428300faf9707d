package buildinfo

import (
	"strings"
	"testing"
)

func TestStringNamesBinaryVersionAndCommit(t *testing.T) {
	oldVersion, oldCommit := Version, Commit
	t.Cleanup(func() { Version, Commit = oldVersion, oldCommit })
	Version, Commit = "v1.2.3", "abc1234"

	got := String("rejuv-healer")
	for _, want := range []string{"rejuv-healer version v1.2.3", "commit abc1234", "go1."} {
		if !strings.Contains(got, want) {
			t.Errorf("String() = %q, want it to contain %q", got, want)
		}
	}
}

func TestStringWithoutCommitSaysUnknownOrRevision(t *testing.T) {
	oldCommit := Commit
	t.Cleanup(func() { Commit = oldCommit })
	Commit = ""

	got := String("x")
	if !strings.Contains(got, "commit ") || strings.Contains(got, "commit ,") {
		t.Errorf("String() = %q, want a commit or \"unknown\"", got)
	}
}
