package e2e

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/rejuv-dev/rejuv/test/deploy"
)

// Tests that need Rejuv running share one stack (see package deploy) and run
// in parallel, each on its own pod.
var (
	sharedOnce  sync.Once
	shared      *deploy.Stack
	sharedError error
)

// rejuvStack starts the shared stack on first use.
func rejuvStack(t *testing.T) *deploy.Stack {
	t.Helper()
	sharedOnce.Do(func() { shared, sharedError = deploy.Start(context.Background(), cluster) })
	if sharedError != nil {
		t.Fatalf("start Rejuv on the cluster: %v", sharedError)
	}
	return shared
}

// stopStack stops the shared stack; TestMain calls it after the tests and
// shows the end of the logs when tests failed.
func stopStack(failed bool) {
	if shared == nil {
		return
	}
	logs := shared.Stop(context.Background())
	if failed {
		fmt.Fprint(os.Stderr, logs)
	}
}
