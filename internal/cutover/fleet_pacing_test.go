package cutover_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// BenchmarkFleet100ZonesThrottled runs a whole cutover of 1,000 weighted names over 100
// zones (two steps, a drift check every hold) against a sandbox that throttles as Route 53
// does since July 2026: a token bucket of 10 requests a second with a burst of 50 for the
// whole account. The runner's own pacing (the provider's bucket, same figures) must keep
// every throttled answer away from the user: the run ends at green=100 with no error. It
// reports the run's time, the requests it sent, and how many the sandbox throttled (each
// retried by the SDK; a throttling error that reached the engine would have failed the run).
func BenchmarkFleet100ZonesThrottled(b *testing.B) {
	zones := make([]string, 100)
	for i := range zones {
		zones[i] = fmt.Sprintf("z%02d.example.com", i)
	}
	f := newFleet(b, sandbox.Config{}, zones, 10)
	sandboxtest.SetFaults(b, f.sb, fmt.Sprintf(`{"requestsPerSecond": %d, "burst": %d}`, route53.DefaultRequestsPerSecond, route53.DefaultBurst))
	runs := 0
	for b.Loop() {
		b.StopTimer()
		// Each run from blue=100 and a full bucket on both sides, as a new process starts.
		sandboxtest.SetFaults(b, f.sb, `{}`)
		f.publish(b, "blue", "127.0.0.10", 100, nil)
		f.publish(b, "green", "127.0.0.20", 0, nil)
		sandboxtest.SetFaults(b, f.sb, fmt.Sprintf(`{"requestsPerSecond": %d, "burst": %d}`, route53.DefaultRequestsPerSecond, route53.DefaultBurst))
		runs++
		cfg := f.config(b, f.plan(b, fmt.Sprintf("fleet100-%d", runs), 50, 100), route53test.Paced(b, f.sb))
		before := sandboxtest.APICalls(b, f.sb)
		start := time.Now()
		b.StartTimer()
		if _, err := cutover.Run(context.Background(), cfg, false); err != nil {
			b.Fatalf("run over 100 zones with Route 53's throttling on: %v", err)
		}
		b.StopTimer()
		elapsed := time.Since(start)
		requests, throttled := 0, 0
		for k, n := range sandboxtest.APICalls(b, f.sb) {
			d := n - before[k]
			requests += d
			if strings.HasSuffix(k, " Throttling") {
				throttled += d
			}
		}
		b.ReportMetric(float64(requests), "requests/run")
		b.ReportMetric(float64(throttled), "throttled/run")
		b.ReportMetric(float64(requests)/elapsed.Seconds(), "requests/s")
		b.StartTimer()
	}
	b.StopTimer()
	sandboxtest.SetFaults(b, f.sb, `{}`)
	f.wantAllAt(b, "blue=0 green=100")
}
