package daemon

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/rejuv-dev/rejuv/daemon/cri"
)

// Options are the daemon's settings, one flag each.
type Options struct {
	NodeName      string
	CRISocket     string
	HostRunDir    string
	MetricsAddr   string
	MetricsSecure bool
	ProbeAddr     string
}

// BindFlags registers the options on fs with their defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&o.NodeName, "node-name", os.Getenv("NODE_NAME"), "the node this daemon serves (default $NODE_NAME)")
	fs.StringVar(&o.CRISocket, "cri-socket", "", "the container runtime's CRI socket (default: the first of containerd's, CRI-O's and cri-dockerd's under --host-run-dir that answers)")
	fs.StringVar(&o.HostRunDir, "host-run-dir", cri.DefaultHostRunDir, "where the host's /run is mounted, to find the runtime's socket")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8443", `address of the metrics endpoint; "0" turns it off`)
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS, only to clients authorized to get /metrics")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8082", "address of /healthz and /readyz")
}

// Validate reports every bad option at once, naming the flag.
func (o *Options) Validate() error {
	var errs []error
	if o.NodeName == "" {
		errs = append(errs, errors.New("--node-name: required (or set $NODE_NAME, e.g. from the downward API spec.nodeName)"))
	}
	if o.CRISocket == "" && o.HostRunDir == "" {
		errs = append(errs, fmt.Errorf("--host-run-dir: must not be empty when --cri-socket is not set"))
	}
	return errors.Join(errs...)
}
