package cri

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultHostRunDir is the host's /run, where runtimes put their sockets.
const DefaultHostRunDir = "/run"

// RuntimeSocket is a runtime socket to try.
type RuntimeSocket struct {
	Runtime string
	Socket  string
}

// WellKnown lists the CRI sockets of containerd, CRI-O and cri-dockerd under
// hostRunDir, in the order they are tried.
func WellKnown(hostRunDir string) []RuntimeSocket {
	return []RuntimeSocket{
		{Runtime: "containerd", Socket: filepath.Join(hostRunDir, "containerd", "containerd.sock")},
		{Runtime: "cri-o", Socket: filepath.Join(hostRunDir, "crio", "crio.sock")},
		{Runtime: "cri-dockerd", Socket: filepath.Join(hostRunDir, "cri-dockerd.sock")},
	}
}

// versionTimeout bounds the Version call that checks a candidate.
const versionTimeout = 3 * time.Second

// Detect connects to the runtime: the socket given (when not empty), or the
// first well-known socket under hostRunDir that answers the CRI Version call.
// When none answers, the error lists every path tried and why it failed.
func Detect(ctx context.Context, socket, hostRunDir string) (*Client, error) {
	candidates := WellKnown(hostRunDir)
	if socket != "" {
		candidates = []RuntimeSocket{{Socket: socket}}
	}
	var tried []string
	for _, cand := range candidates {
		c, err := probe(ctx, cand)
		if err == nil {
			return c, nil
		}
		tried = append(tried, fmt.Sprintf("%s: %v", cand.Socket, err))
	}
	hint := "set --cri-socket, or --host-run-dir to where the host's /run is mounted"
	if socket != "" {
		hint = "check --cri-socket"
	}
	return nil, fmt.Errorf("no container runtime answered the CRI Version call; tried %s; %s", strings.Join(tried, "; "), hint)
}

func probe(ctx context.Context, cand RuntimeSocket) (*Client, error) {
	fi, err := os.Stat(cand.Socket)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, errors.New("no such file")
	case err != nil:
		return nil, err
	case fi.Mode()&os.ModeSocket == 0:
		return nil, errors.New("not a socket")
	}
	c, err := Dial(cand.Socket)
	if err != nil {
		return nil, err
	}
	vctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	v, err := c.Runtime.Version(vctx, &runtimeapi.VersionRequest{})
	if err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("Version: %w", err)
	}
	c.setVersion(v)
	return c, nil
}
