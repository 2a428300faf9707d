package traffic

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Options shape a stream.
type Options struct {
	// Rate is how many requests a second are sent, each at its own time
	// whether or not earlier ones have been answered (an open loop, as
	// independent users are).
	Rate int
	// KeepAlive reuses connections between requests; without it every
	// request opens a connection of its own.
	KeepAlive bool
	// Timeout fails a request not answered within it; 5 s when zero.
	Timeout time.Duration
	// Limit stops the stream after this many requests; none when zero.
	Limit int
}

// maxInFlight bounds the requests waiting for an answer: a request due
// while this many wait is counted failed without being sent (a server this
// slow has failed its users).
const maxInFlight = 1000

// Stream is a running stream of requests; Stop ends it.
type Stream struct {
	url    string
	client *http.Client
	stop   chan struct{}
	done   chan struct{}
	wg     sync.WaitGroup

	mu      sync.Mutex
	phase   string
	phases  []string
	results []Result
}

// Result is one request's outcome.
type Result struct {
	// Phase is the phase the stream was in when the request was sent.
	Phase string
	// Sent is when it was sent.
	Sent time.Time
	// Latency is how long until the answer or the failure.
	Latency time.Duration
	// Err says why it failed; empty when it succeeded.
	Err string
	// Body is the answer's first line (testapp answers with its pod's
	// name): who served it.
	Body string
}

// Start begins sending GET url in phase; it fails on options that cannot
// make a stream.
func Start(url, phase string, o Options) (*Stream, error) {
	if o.Rate <= 0 {
		return nil, fmt.Errorf("traffic: rate %d: must be positive", o.Rate)
	}
	timeout := o.Timeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
		DisableKeepAlives:   !o.KeepAlive,
		MaxIdleConnsPerHost: 32,
		IdleConnTimeout:     90 * time.Second,
	}
	s := &Stream{
		url:    url,
		client: &http.Client{Transport: transport, Timeout: timeout},
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
		phase:  phase,
		phases: []string{phase},
	}
	go s.send(time.Second/time.Duration(o.Rate), o.Limit)
	return s, nil
}

// send starts a request every period until stopped or limit is reached.
func (s *Stream) send(period time.Duration, limit int) {
	defer close(s.done)
	tick := time.NewTicker(period)
	defer tick.Stop()
	inFlight := make(chan struct{}, maxInFlight)
	for n := 0; limit == 0 || n < limit; n++ {
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		phase := s.phase
		s.mu.Unlock()
		select {
		case inFlight <- struct{}{}:
		default:
			s.record(Result{Phase: phase, Sent: time.Now(), Err: fmt.Sprintf("not sent: %d requests wait for an answer", maxInFlight)})
			continue
		}
		s.wg.Go(func() {
			defer func() { <-inFlight }()
			s.record(s.get(phase))
		})
	}
}

// get sends one request.
func (s *Stream) get(phase string) Result {
	r := Result{Phase: phase, Sent: time.Now()}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.url, nil)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	resp, err := s.client.Do(req)
	if err != nil {
		r.Latency, r.Err = time.Since(r.Sent), err.Error()
		return r
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	_ = resp.Body.Close()
	r.Latency = time.Since(r.Sent)
	switch {
	case err != nil:
		r.Err = "read the answer: " + err.Error()
	case resp.StatusCode != http.StatusOK:
		r.Err = resp.Status
	}
	r.Body, _, _ = strings.Cut(string(body), "\n")
	return r
}

func (s *Stream) record(r Result) {
	s.mu.Lock()
	s.results = append(s.results, r)
	s.mu.Unlock()
}

// Phase names the requests sent from now on.
func (s *Stream) Phase(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = name
	s.phases = append(s.phases, name)
}

// Sent is how many requests have been sent or counted so far.
func (s *Stream) Sent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.results)
}

// Wait blocks until the stream has sent its limit, or ctx ends.
func (s *Stream) Wait(ctx context.Context) error {
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Stop ends the stream, waits for the answers still due and reports.
func (s *Stream) Stop() *Report {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	<-s.done
	s.wg.Wait()
	s.client.CloseIdleConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	return newReport(s.phases, s.results)
}
