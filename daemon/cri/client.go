package cri

import (
	"context"
	"fmt"
	"path"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Client is a connection to the runtime's CRI socket. gRPC reconnects with
// back-off by itself when the runtime restarts; Check says whether it
// answers now.
type Client struct {
	Socket  string
	Runtime runtimeapi.RuntimeServiceClient
	conn    *grpc.ClientConn

	mu      sync.Mutex
	name    string
	version string
}

// Dial connects to a CRI socket without calling it; every call through the
// client is timed in rejuv_daemon_cri_request_duration_seconds.
func Dial(socket string) (*Client, error) {
	conn, err := grpc.NewClient("unix://"+socket,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(timeCall),
		grpc.WithConnectParams(reconnect),
	)
	if err != nil {
		return nil, fmt.Errorf("connect to CRI socket %s: %w", socket, err)
	}
	return &Client{Socket: socket, Runtime: runtimeapi.NewRuntimeServiceClient(conn), conn: conn}, nil
}

// reconnect is the back-off between attempts to reach a runtime that went
// away: quick at first, so that a restarted runtime is found again within a
// fraction of a second, and at most every 5 s while it stays down.
var reconnect = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
	MinConnectTimeout: 2 * time.Second,
}

// timeCall records each CRI call's duration by method and gRPC code.
func timeCall(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	start := time.Now()
	err := invoker(ctx, method, req, reply, cc, opts...)
	criRequestDuration.WithLabelValues(path.Base(method), status.Code(err).String()).Observe(time.Since(start).Seconds())
	return err
}

// Name and Version are the runtime's, as it last reported them.
func (c *Client) Name() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.name
}

// Version is the runtime's version as it last reported it.
func (c *Client) Version() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

func (c *Client) setVersion(v *runtimeapi.VersionResponse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.name != "" && (c.name != v.RuntimeName || c.version != v.RuntimeVersion) {
		runtimeInfo.DeleteLabelValues(c.name, c.version)
	}
	c.name, c.version = v.RuntimeName, v.RuntimeVersion
	runtimeInfo.WithLabelValues(c.name, c.version).Set(1)
}

// Check calls Version: nil means the runtime answers now. A changed
// version (the runtime was upgraded and restarted) updates the metric.
func (c *Client) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	v, err := c.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		return fmt.Errorf("container runtime at %s does not answer: %w", c.Socket, err)
	}
	c.setVersion(v)
	return nil
}

// Close ends the connection.
func (c *Client) Close() error {
	return c.conn.Close()
}
