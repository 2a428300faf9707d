package v1alpha1

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		limit   int
		want    string
	}{
		{"within", "short", 5, "short"},
		{"over", strings.Repeat("a", 100), 40, strings.Repeat("a", 10) + "... (truncated from 100 bytes)"},
		{"at a character's boundary", strings.Repeat("é", 50), 41, strings.Repeat("é", 5) + "... (truncated from 100 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Truncate(tc.s, tc.limit)
			if got != tc.want || len(got) > tc.limit || !utf8.ValidString(got) {
				t.Errorf("Truncate(%d bytes, %d) = %q (%d bytes), want %q", len(tc.s), tc.limit, got, len(got), tc.want)
			}
		})
	}
}
