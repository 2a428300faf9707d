package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	os.Exit(run(signals))
}

// run waits for signals, reaping on SIGCHLD, and returns the exit code on the
// first SIGTERM or SIGINT.
func run(signals <-chan os.Signal) int {
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			return 0
		}
		reap()
	}
	return 0
}

// reap collects every child that has exited. One SIGCHLD may stand for
// several children, so it loops until none is left to collect.
func reap() {
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
