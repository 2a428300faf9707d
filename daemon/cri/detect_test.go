package cri

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDetectListsEveryPathTried(t *testing.T) {
	run := t.TempDir()
	// containerd's path holds a plain file; CRI-O's a socket that is not a
	// CRI server; cri-dockerd's nothing.
	if err := os.MkdirAll(filepath.Join(run, "containerd"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "containerd", "containerd.sock"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(run, "crio"), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", filepath.Join(run, "crio", "crio.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()

	_, err = Detect(context.Background(), "", run)
	if err == nil {
		t.Fatal("Detect found a runtime where none runs")
	}
	msg := err.Error()
	for _, want := range []string{
		"no container runtime answered the CRI Version call",
		filepath.Join(run, "containerd", "containerd.sock") + ": not a socket",
		filepath.Join(run, "crio", "crio.sock") + ": Version: ",
		filepath.Join(run, "cri-dockerd.sock") + ": no such file",
		"set --cri-socket, or --host-run-dir",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q\nlacks %q", msg, want)
		}
	}
}

func TestDetectWithAGivenSocketTriesOnlyIt(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "missing.sock")
	_, err := Detect(context.Background(), sock, "/run")
	if err == nil {
		t.Fatal("Detect succeeded with a missing socket")
	}
	if !strings.Contains(err.Error(), sock+": no such file") || !strings.Contains(err.Error(), "check --cri-socket") || strings.Contains(err.Error(), "containerd.sock") {
		t.Errorf("error = %q, want only the given socket and the flag named", err)
	}
}
