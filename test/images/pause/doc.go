// Command pause is the pod sandbox process for containerd's sandbox_image in
// Rejuv's test clusters: it sleeps until SIGTERM or SIGINT, then exits 0, and
// as the sandbox's PID 1 it reaps the zombies reparented to it.
package main
