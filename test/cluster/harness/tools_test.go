package harness

import (
	"context"
	"os"
	"strings"
	"testing"
)

func TestMissingToolsErrorNamesPackageAndVariable(t *testing.T) {
	var tools Tools
	req := tools.requirements()
	err := missingToolsError([]tool{req[0], req[5]}, "not running as root, so nothing can be installed")
	msg := err.Error()
	for _, want := range []string{
		"not running as root",
		`etcd: install Debian package "etcd-server", or set REJUV_ETCD`,
		`install Debian package "containernetworking-plugins", or set REJUV_CNI_BIN_DIR`,
		"a directory holding bridge, host-local, loopback",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}

func TestExplicitToolPathIsNotReplacedByAPackage(t *testing.T) {
	t.Setenv("REJUV_ETCD", "/nonexistent/etcd")
	cfg := Config{Tools: DefaultTools(), Out: os.Stderr}
	err := ensureTools(context.Background(), &cfg)
	if err == nil || !strings.Contains(err.Error(), "REJUV_ETCD=/nonexistent/etcd is not a usable etcd") {
		t.Fatalf("ensureTools() = %v, want it to name REJUV_ETCD and the bad path", err)
	}
}

func TestPackagesOfIsSortedAndUnique(t *testing.T) {
	var tools Tools
	req := tools.requirements()
	got := strings.Join(packagesOf([]tool{req[1], req[2], req[0]}), " ")
	if got != "containerd etcd-server" {
		t.Fatalf("packagesOf() = %q, want %q", got, "containerd etcd-server")
	}
}

func TestTail(t *testing.T) {
	if got := tail("a\nb\nc\n", 2); got != "b\nc" {
		t.Fatalf("tail = %q", got)
	}
	if got := tail("a", 5); got != "a" {
		t.Fatalf("tail = %q", got)
	}
}
