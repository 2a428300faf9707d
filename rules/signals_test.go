package rules

import (
	"fmt"
	"testing"
)

func TestNames(t *testing.T) {
	src := "package queue\nimport rego.v1\nrecreate contains c.name if { some c in input.containers; input.signals.depth > 3 }"
	for field, want := range map[string]bool{"depth": true, "signals": true, "queue": false, "v1": false, "rego": false} {
		if got := Names(src, field); got != want {
			t.Errorf("Names(%q) = %v, want %v", field, got, want)
		}
	}
}

func TestReadsMemory(t *testing.T) {
	for _, r := range Builtins() {
		want := r.Name == "memory-leak" || r.Name == "memory-near-limit"
		if r.ReadsMemory != want {
			t.Errorf("built-in %s: ReadsMemory is %v, want %v", r.Name, r.ReadsMemory, want)
		}
	}
	for _, tc := range []struct {
		name, src string
		want      bool
	}{
		{"a field", "package x\nrecreate contains c.name if { some c in input.containers; c.memory.workingSetBytes > 1 }", true},
		{"an index", "package x\nrecreate contains c.name if { some c in input.containers; c[\"memory\"] }", true},
		{"object.get", "package x\nrecreate contains c.name if { some c in input.containers; object.get(c, [\"memory\", \"r2\"], 0) > 1 }", true},
		{"rego v0", "package x\nrecreate[c.name] { c := input.containers[_]; c.memory.r2 > 0.9 }", true},
		{"no memory", "package x\nrecreate contains c.name if { some c in input.containers; c.restartCount > 3 }", false},
		{"a limit only", "package x\nrecreate contains c.name if { some c in input.containers; c.resources.limits.cpu > 3 }", false},
		{"does not parse", "package x\nrecreate contains memory if {", false},
		{"the package's name", "package memory\nrecreate contains c.name if { some c in input.containers; c.restartCount > 3 }", false},
	} {
		if got := ReadsMemory(tc.src); got != tc.want {
			t.Errorf("%s: ReadsMemory is %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNamesRemembersByModuleAndField: asked again, Names gives the same
// answers, field by field, and it remembers at most answersLimit of them.
func TestNamesRemembersByModuleAndField(t *testing.T) {
	src := "package q\n\nrecreate contains c.name if {\n\tsome c in input.containers\n\tinput.signals.queue > 1\n}\n"
	for range 2 {
		if !Names(src, "queue") || Names(src, "memory") {
			t.Fatalf("Names(queue) %v, Names(memory) %v; want true and false", Names(src, "queue"), Names(src, "memory"))
		}
	}
	for i := range answersLimit + 1 {
		Names(fmt.Sprintf("package q%d\n\nrecreate := set()\n", i), "memory")
	}
	answers.mu.Lock()
	n := len(answers.m)
	answers.mu.Unlock()
	if n > answersLimit {
		t.Errorf("%d answers remembered, want at most %d", n, answersLimit)
	}
}
