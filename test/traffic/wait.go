package traffic

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// WaitAnswered sends bursts of requests to url until every body in want
// (the first line of an answer: testapp's names its pod) has answered,
// as a Service does once its endpoints and the data plane's rules are in
// place; it fails when ctx ends first, naming those never heard.
func WaitAnswered(ctx context.Context, url string, want []string) error {
	heard := map[string]bool{}
	for {
		s, err := Start(url, "probe", Options{Rate: 100, Limit: 50, Timeout: time.Second})
		if err != nil {
			return err
		}
		_ = s.Wait(ctx)
		for _, r := range s.Stop().Results {
			heard[r.Body] = true
		}
		missing := slices.DeleteFunc(slices.Clone(want), func(b string) bool { return heard[b] })
		if len(missing) == 0 {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no answer from %v through %s: %w", missing, url, ctx.Err())
		}
	}
}
