package main

import (
	"flag"
	"fmt"
	"io"
	"time"
)

// options are the command-line flags: the state testapp starts with.
type options struct {
	listen        string
	ready         bool
	live          bool
	ignoreSigterm bool
	startupDelay  time.Duration
	unreadyAfter  time.Duration
	growRate      int64
	growLimit     int64
	growAfter     time.Duration
	freeEvery     time.Duration
	warmUp        int64
	warmUpTime    time.Duration
	exitAfter     time.Duration
	exitCode      int
	controlFile   string
	// forgeURLs, when set, make testapp a forger: it posts forgeBody to
	// each forgeCount times, prints what came back and exits.
	forgeURLs  []string
	forgeBody  string
	forgeCount int
}

// parseFlags parses args; errors (flag.ErrHelp included) are already reported
// on stderr by the flag package.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("testapp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", ":8080", "address to serve HTTP on")
	fs.BoolVar(&o.ready, "ready", true, "whether /readyz answers 200 at start")
	fs.BoolVar(&o.live, "live", true, "whether /healthz answers 200 at start")
	fs.BoolVar(&o.ignoreSigterm, "ignore-sigterm", false, "keep running on SIGTERM")
	fs.DurationVar(&o.startupDelay, "startup-delay", 0, "wait this long before listening")
	fs.Var(quantityValue{&o.growRate}, "grow-rate", "memory to allocate and hold per second, a quantity such as 1Mi")
	fs.Var(quantityValue{&o.growLimit}, "grow-limit", "stop growing once this much memory is held; 0 means no limit")
	fs.DurationVar(&o.growAfter, "grow-after", 0, "start growing this long after starting: with a grow-limit reached in a second, a one-time step such as a cache warming up")
	fs.DurationVar(&o.freeEvery, "free-every", 0, "free all the memory grown so far this often, as a garbage-collected heap falls back: with a grow-rate, a sawtooth; 0 means never")
	fs.Var(quantityValue{&o.warmUp}, "warm-up", "memory to allocate and hold as an app warming up does, a quantity such as 150Mi: reached along a saturating curve (see --warm-up-time), then held; 0 means none")
	fs.DurationVar(&o.warmUpTime, "warm-up-time", 30*time.Second, "the warm-up's time constant: 63% of --warm-up is held after it, 95% after three")
	fs.DurationVar(&o.unreadyAfter, "unready-after", 0, "stop answering /readyz with 200 this long after starting, as a wedged app would; 0 means never")
	fs.DurationVar(&o.exitAfter, "exit-after", 0, "exit this long after starting; 0 means never")
	fs.IntVar(&o.exitCode, "exit-code", 0, "exit code for --exit-after")
	fs.StringVar(&o.controlFile, "control-file", "", "file of key=value controls, re-applied whenever it changes; empty means none")
	fs.Func("forge-url", "post --forge-body to this URL over HTTPS, unverified and without a client certificate, print the answers and exit instead of serving (repeatable)", func(v string) error {
		o.forgeURLs = append(o.forgeURLs, v)
		return nil
	})
	fs.StringVar(&o.forgeBody, "forge-body", "", "the body --forge-url posts")
	fs.IntVar(&o.forgeCount, "forge-count", 1, "how many times --forge-url posts to each URL")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	if o.warmUpTime <= 0 {
		fmt.Fprintf(stderr, "--warm-up-time: %s is not a positive duration\n", o.warmUpTime)
		return options{}, fmt.Errorf("--warm-up-time %s", o.warmUpTime)
	}
	return o, nil
}

// quantityValue is a flag holding a byte count written as a Kubernetes quantity.
type quantityValue struct{ bytes *int64 }

func (q quantityValue) String() string {
	if q.bytes == nil {
		return "0"
	}
	return formatBytes(*q.bytes)
}

func (q quantityValue) Set(s string) error {
	v, err := parseBytes(s)
	if err != nil {
		return err
	}
	*q.bytes = v
	return nil
}
