package images

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBusyboxErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "busybox")
	notELF := filepath.Join(t.TempDir(), "busybox.sh")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		busybox string
		want    string
	}{
		{name: "missing", busybox: missing, want: missing + " does not exist"},
		{name: "dynamic", busybox: "/bin/ls", want: "/bin/ls is dynamically linked"},
		{name: "not ELF", busybox: notELF, want: notELF + " is not a readable ELF executable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.busybox == "/bin/ls" {
				if err := checkStatic("/bin/ls"); err == nil {
					t.Fatal("/bin/ls is static on this machine; the test needs a dynamically linked binary")
				}
			}
			t.Setenv(busyboxEnv, tt.busybox)
			_, err := Build(t.Context(), TestApp, t.TempDir())
			if err == nil {
				t.Fatalf("Build with %s=%s succeeded", busyboxEnv, tt.busybox)
			}
			for _, want := range []string{
				"build image rejuv.local/testapp:dev: busybox: " + tt.want,
				"busybox-static",
				"REJUV_BUSYBOX",
			} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}
