package cli

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/rejuv-dev/rejuv/cmd/internal/buildinfo"
)

func TestParse(t *testing.T) {
	oldVersion := buildinfo.Version
	t.Cleanup(func() { buildinfo.Version = oldVersion })
	buildinfo.Version = "v9.9.9"

	tests := []struct {
		name       string
		args       []string
		wantDone   bool
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{name: "no flags", args: nil, wantDone: false, wantCode: ExitOK},
		{name: "help", args: []string{"--help"}, wantDone: true, wantCode: ExitOK, wantStdout: "Usage: rejuv-test [flags]"},
		{name: "short help", args: []string{"-h"}, wantDone: true, wantCode: ExitOK, wantStdout: "-version"},
		{name: "version", args: []string{"--version"}, wantDone: true, wantCode: ExitOK, wantStdout: "rejuv-test version v9.9.9"},
		{name: "unknown flag", args: []string{"--bogus"}, wantDone: true, wantCode: ExitUsage, wantStderr: "flag provided but not defined: -bogus"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := flag.NewFlagSet("rejuv-test", flag.ContinueOnError)
			fs.Usage = Usage(fs, "rejuv-test [flags]", "A test binary.")
			var stdout, stderr bytes.Buffer
			done, code := Parse(fs, tt.args, &stdout, &stderr)
			if done != tt.wantDone || code != tt.wantCode {
				t.Fatalf("Parse(%v) = (%v, %d), want (%v, %d)", tt.args, done, code, tt.wantDone, tt.wantCode)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout = %q, want it to contain %q", stdout.String(), tt.wantStdout)
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr = %q, want it to contain %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}
