package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// changes are what the release notes list as changed: the commits after
// the previous release's tag (Since, a vX.Y.Z tag that commit descends
// from), newest first, each by the first sentence of its subject. Since is
// empty for the first release, which lists none.
type changes struct {
	Since    string
	Subjects []string
}

// changesSince reads the changes up to commit from the git repository in
// the working directory.
func changesSince(ctx context.Context, commit string) (changes, error) {
	tag, err := git(ctx, "describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", commit+"^")
	if err != nil {
		if strings.Contains(err.Error(), "No names found") || strings.Contains(err.Error(), "No tags can describe") {
			return changes{}, nil // no earlier release
		}
		return changes{}, fmt.Errorf("find the release before commit %s: %w", commit, err)
	}
	c := changes{Since: strings.TrimSpace(tag)}
	log, err := git(ctx, "log", "--no-merges", "--format=%s", c.Since+".."+commit)
	if err != nil {
		return changes{}, fmt.Errorf("list the commits from %s to %s: %w", c.Since, commit, err)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(log), "\n") {
		if line != "" {
			c.Subjects = append(c.Subjects, firstSentence(line))
		}
	}
	return c, nil
}

// firstSentence is s up to the end of its first sentence.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

func git(ctx context.Context, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
