package demo

import (
	"context"
	"time"
)

// every calls f after first, then once each interval (start to start) until ctx is done:
// the loops a demo cluster runs to keep its records or targets published (first an
// interval: the caller has just done the work itself), and the load generator's clients
// (first staggered, to spread them over the interval).
func every(ctx context.Context, first, interval time.Duration, f func()) {
	t := time.NewTimer(first)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		t.Reset(interval)
		f()
	}
}
