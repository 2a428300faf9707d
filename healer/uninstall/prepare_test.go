package uninstall

import (
	"flag"
	"strings"
	"testing"
)

// TestOptionsNameEachBadFlag: an empty namespace or ServiceAccount and a
// timeout that is not positive are refused, each named.
func TestOptionsNameEachBadFlag(t *testing.T) {
	var o Options
	fs := flag.NewFlagSet("prepare-uninstall", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse([]string{"--namespace=", "--service-account=", "--timeout=0s"}); err != nil {
		t.Fatal(err)
	}
	err := o.Validate()
	for _, want := range []string{"--namespace is empty", "--service-account is empty", "--timeout is 0s"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to say %q", err, want)
		}
	}
	o = Options{}
	fs = flag.NewFlagSet("prepare-uninstall", flag.ContinueOnError)
	o.BindFlags(fs)
	if err := fs.Parse(nil); err != nil || o.Validate() != nil || o.Poll <= 0 {
		t.Errorf("the defaults: %v, %v, poll %s; want valid", err, o.Validate(), o.Poll)
	}
}
