package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	run(signals)
}

// run waits for signals, reaping on SIGCHLD, and returns on the first
// SIGTERM or SIGINT (or when signals is closed); the process then exits 0.
func run(signals <-chan os.Signal) {
	for sig := range signals {
		if sig != syscall.SIGCHLD {
			return
		}
		reap()
	}
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
