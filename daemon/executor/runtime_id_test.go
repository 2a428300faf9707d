package executor

import "testing"

func TestRuntimeID(t *testing.T) {
	for in, want := range map[string]string{"containerd://abc": "abc", "cri-o://x": "x", "plain": "plain"} {
		if got := runtimeID(in); got != want {
			t.Errorf("runtimeID(%q) = %q, want %q", in, got, want)
		}
	}
}
