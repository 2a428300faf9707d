// Package buildinfo owns the version string of Rejuv's binaries.
// The Makefile stamps Version and Commit with -ldflags -X; nothing else
// writes them.
package buildinfo
