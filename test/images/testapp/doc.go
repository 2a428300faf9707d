// Command testapp is the HTTP workload of Rejuv's end-to-end tests: its probes,
// SIGTERM handling, exit and memory growth are set by flags and changed at run
// time through /control or a polled control file, so tests can make it misbehave.
package main
