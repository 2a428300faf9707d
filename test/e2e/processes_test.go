package e2e

import (
	"testing"

	"github.com/rejuv-dev/rejuv/test/deploy"
)

// launch starts a built binary; see deploy.Launch.
func launch(name string, args []string, logDir, readyURL string) (*deploy.Process, error) {
	return deploy.Launch(name, args, logDir, readyURL)
}

// startBinary runs a built binary until the test ends, showing the end of
// its log when the test fails. It returns stop and the log's path.
func startBinary(t *testing.T, name string, args []string, readyURL string) (stop func(), logPath string) {
	t.Helper()
	p, err := deploy.Launch(name, args, t.TempDir(), readyURL)
	if err != nil {
		t.Fatal(err)
	}
	stop = func() {
		p.Stop()
		if t.Failed() {
			t.Logf("%s log:\n%s", name, p.Tail(40))
		}
	}
	t.Cleanup(stop)
	return stop, p.Log
}

func freePort(t *testing.T) int {
	t.Helper()
	p, err := deploy.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var (
	httpStatus = deploy.HTTPStatus
	tailLines  = deploy.TailLines
)
