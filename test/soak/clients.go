package main

import (
	"fmt"
	"time"

	"github.com/rejuv-dev/rejuv/test/soak/invariant"
	"github.com/rejuv-dev/rejuv/test/traffic"
)

// clientRate is each client's requests a second: two clients per served
// app, one over kept-alive connections, one opening a connection per
// request.
const clientRate = 20

// serviceClient is one stream of requests to a Service.
type serviceClient struct {
	service, how string
	stream       *traffic.Stream
}

// clients send steady traffic to every served app's Service.
type clients []serviceClient

// startClients starts two streams per Service (urls by namespace/name),
// each bounded to what runFor would send.
func startClients(urls map[string]string, runFor time.Duration) (clients, error) {
	var c clients
	for service, url := range urls {
		for how, keepAlive := range map[string]bool{"kept-alive": true, "a connection per request": false} {
			s, err := traffic.Start(url, "soak", traffic.Options{Rate: clientRate, KeepAlive: keepAlive, Limit: clientRate * int(runFor.Seconds())})
			if err != nil {
				c.stop()
				return nil, fmt.Errorf("clients of %s: %w", service, err)
			}
			c = append(c, serviceClient{service: service, how: how, stream: s})
		}
	}
	return c, nil
}

// clientTotals are what the clients sent and each request that failed,
// as the checker takes it.
type clientTotals struct {
	sent, failed int
	failures     []invariant.ClientFailed
}

// stop ends every stream.
func (c clients) stop() clientTotals {
	var t clientTotals
	for _, cl := range c {
		r := cl.stream.Stop()
		sent, failed := r.Total()
		t.sent += sent
		t.failed += failed
		for _, res := range r.Results {
			if res.Err != "" {
				err := cl.how + ": " + res.Err
				if res.Body != "" {
					err += ": " + res.Body
				}
				t.failures = append(t.failures, invariant.ClientFailed{At: res.Sent, Service: cl.service, Err: err})
			}
		}
	}
	return t
}
