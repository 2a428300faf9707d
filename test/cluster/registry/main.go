// Command registry serves an OCI registry (go-containerregistry's) on one
// address, its blobs kept in a directory: the local cluster's registry,
// which the harness starts beside the cluster's components and the images
// the tests build are pushed to. Manifests are kept in memory: a restarted
// registry is empty, and the harness pushes again.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "registry: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:20500", "the address to serve on")
	blobs := flag.String("blobs", "", "the directory blobs are kept in; in memory when empty")
	flag.Parse()
	opts := []registry.Option{registry.Logger(log.New(os.Stderr, "", log.LstdFlags))}
	if *blobs != "" {
		if err := os.MkdirAll(*blobs, 0o755); err != nil {
			return fmt.Errorf("-blobs: %w", err)
		}
		opts = append(opts, registry.WithBlobHandler(registry.NewDiskBlobHandler(*blobs)))
	}
	server := &http.Server{Addr: *addr, Handler: registry.New(opts...), ReadHeaderTimeout: 10 * time.Second}
	if err := server.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
