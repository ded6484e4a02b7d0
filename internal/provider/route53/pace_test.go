package route53

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
)

// fleetRun is what one fleet step cost: the requests the sandbox saw, and how many of
// them it throttled, over elapsed.
type fleetRun struct {
	requests, throttled int
	elapsed             time.Duration
	errs                []error
}

// runFleet writes one weighted pair in each zone, all zones at once, and polls each
// change to INSYNC, as a cutover step over a fleet does; it returns what the sandbox
// counted meanwhile.
func runFleet(tb testing.TB, sb *sandbox.Sandbox, p *Provider, zs []provider.Zone) fleetRun {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	before := sandboxtest.APICalls(tb, sb)
	var (
		mu  sync.Mutex
		out fleetRun
		wg  sync.WaitGroup
	)
	start := time.Now()
	for _, z := range zs {
		wg.Go(func() {
			err := fleetStep(ctx, p, z)
			if err != nil {
				mu.Lock()
				out.errs = append(out.errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	for k, n := range sandboxtest.APICalls(tb, sb) {
		d := n - before[k]
		out.requests += d
		if strings.HasSuffix(k, " Throttling") {
			out.throttled += d
		}
	}
	return out
}

// fleetStep writes z's weighted pair and polls the change until INSYNC.
func fleetStep(ctx context.Context, p *Provider, z provider.Zone) error {
	name := "app." + z.Name
	var batch changes.Batch
	for _, m := range []struct {
		id     string
		weight int64
		ip     string
	}{{"blue", 30, "192.0.2.1"}, {"green", 70, "192.0.2.2"}} {
		batch = append(batch, changes.Change{Action: changes.Upsert, Endpoint: &endpoint.Endpoint{Name: name, Type: "A",
			TTL: 60, Targets: endpoint.Targets{m.ip}, SetIdentifier: m.id, Policy: endpoint.RoutingPolicy{Kind: endpoint.Weighted, Weight: m.weight}}})
	}
	id, err := p.ApplyChange(ctx, z, batch, ChangeComment)
	if err != nil {
		return err
	}
	for {
		ok, err := p.InSync(ctx, id)
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("zone %s: change %s: %w", z.Name, id, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// fleetZones creates n zones in sb.
func fleetZones(tb testing.TB, sb *sandbox.Sandbox, n int) []provider.Zone {
	tb.Helper()
	var zs []provider.Zone
	for i := range n {
		name := fmt.Sprintf("fleet%03d.example", i)
		z, _, err := sb.Store().CreateZone(name, "ref-"+name, "", false)
		if err != nil {
			tb.Fatalf("create zone %s: %v", name, err)
		}
		zs = append(zs, provider.Zone{ID: z.ID, Name: name})
	}
	return zs
}

// TestPacingFleetWithinAccountLimit writes 100 zones at once, each change polled to
// INSYNC, against a sandbox that throttles the account over its rate as Route 53 does:
// the provider's own pacing keeps every request within the bucket, so no call fails with
// Throttling, and the sandbox saw no more requests than burst + rate × elapsed. The rate
// is Route 53's ×10 (100/s, burst 50) to keep the test short; BenchmarkPacedFleet runs
// Route 53's own.
func TestPacingFleetWithinAccountLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 zones through a sandbox at a paced rate; not in -short")
	}
	const rps, burst = 100.0, 50
	sb := sandboxtest.StartWith(t, sandbox.Config{ChangeDelay: 100 * time.Millisecond})
	zs := fleetZones(t, sb, 100)
	p := newTestProvider(t, sb, Config{RequestsPerSecond: rps, Burst: burst})
	if _, err := p.Zones(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Set after the zones are listed, so the sandbox's bucket is as full as the provider's
	// can be when the fleet starts.
	sandboxtest.SetFaults(t, sb, fmt.Sprintf(`{"requestsPerSecond": %v, "burst": %d}`, rps, burst))
	run := runFleet(t, sb, p, zs)
	t.Logf("%d requests in %s: %.1f requests/s (bucket %v/s, burst %d); %d throttled by the sandbox and retried",
		run.requests, run.elapsed.Round(time.Millisecond), float64(run.requests)/run.elapsed.Seconds(), rps, burst, run.throttled)
	if err := errors.Join(run.errs...); err != nil {
		t.Fatalf("%d of %d zones failed: %v", len(run.errs), len(zs), err)
	}
	if run.requests < 2*len(zs) {
		t.Fatalf("the sandbox saw %d requests, want at least a change and a poll per zone (%d): the test measured nothing", run.requests, 2*len(zs))
	}
	if allowed := burst + rps*run.elapsed.Seconds(); float64(run.requests) > allowed {
		t.Fatalf("the sandbox saw %d requests in %s, over the %.0f the bucket allows (burst %d + %v/s): not paced",
			run.requests, run.elapsed, allowed, burst, rps)
	}
}

// TestPacingConfig: the bucket Config asks for, and the values refused.
func TestPacingConfig(t *testing.T) {
	shared := NewLimiter(3, 4)
	for _, tc := range []struct {
		name  string
		cfg   Config
		rate  float64 // 0: no bucket
		burst int
		err   string
	}{
		{name: "defaults: Route 53's account limit", cfg: Config{}, rate: DefaultRequestsPerSecond, burst: DefaultBurst},
		{name: "own rate and burst", cfg: Config{RequestsPerSecond: 2.5, Burst: 7}, rate: 2.5, burst: 7},
		{name: "rate alone keeps the default burst", cfg: Config{RequestsPerSecond: 5}, rate: 5, burst: DefaultBurst},
		{name: "negative rate: off", cfg: Config{RequestsPerSecond: -1}},
		{name: "shared limiter wins", cfg: Config{RequestsPerSecond: 99, Limiter: shared}, rate: 3, burst: 4},
		{name: "negative burst", cfg: Config{Burst: -1}, err: "burst -1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.validate()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("validate = %v, want an error naming %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			lim := tc.cfg.limiter()
			switch {
			case tc.rate == 0 && lim != nil:
				t.Fatalf("limiter %v/s, want none", lim.Limit())
			case tc.rate == 0:
			case lim == nil:
				t.Fatal("no limiter")
			case float64(lim.Limit()) != tc.rate || lim.Burst() != tc.burst:
				t.Fatalf("limiter %v/s burst %d, want %v/s burst %d", lim.Limit(), lim.Burst(), tc.rate, tc.burst)
			}
		})
	}
}

// TestPacingWaitEndsWithContext: a call waiting for a slot ends when its context does,
// with an error naming the operation and the pacing, and sends nothing.
func TestPacingWaitEndsWithContext(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox; not in -short")
	}
	sb := startSandbox(t)
	z := createZone(t, sb, "example.com", false)
	// One slot per hour: the first call takes it, the second cannot get one.
	p := newTestProvider(t, sb, Config{RequestsPerSecond: 1.0 / 3600, Burst: 1})
	if _, err := p.Zones(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := apiCalls(t, sb)["ListResourceRecordSets ok"]
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := p.Records(ctx, z)
	if err == nil || !strings.Contains(err.Error(), "ListResourceRecordSets") || !strings.Contains(err.Error(), "waiting for a request slot") {
		t.Fatalf("Records = %v, want an error waiting for a request slot for ListResourceRecordSets", err)
	}
	if n := apiCalls(t, sb)["ListResourceRecordSets ok"] - before; n != 0 {
		t.Fatalf("%d ListResourceRecordSets sent past the bucket", n)
	}
}

// BenchmarkPacedFleet runs a fleet step over 100 zones at Route 53's account limit (the
// provider's defaults, 10 requests/s, burst 50, and the sandbox throttling over the same)
// and reports the requests per second achieved and how many the sandbox throttled.
func BenchmarkPacedFleet(b *testing.B) {
	sb := sandboxtest.StartWith(b, sandbox.Config{ChangeDelay: 100 * time.Millisecond})
	zs := fleetZones(b, sb, 100)
	p, err := New(context.Background(), Config{Endpoint: sb.APIURL(), Region: "us-east-1", MaxBackoff: 5 * time.Millisecond,
		Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		sandboxtest.SetFaults(b, sb, fmt.Sprintf(`{"requestsPerSecond": %d, "burst": %d}`, DefaultRequestsPerSecond, DefaultBurst))
		run := runFleet(b, sb, p, zs)
		if err := errors.Join(run.errs...); err != nil {
			b.Fatalf("%d of %d zones failed: %v", len(run.errs), len(zs), err)
		}
		b.ReportMetric(float64(run.requests)/run.elapsed.Seconds(), "requests/s")
		b.ReportMetric(float64(run.throttled), "throttled")
		b.ReportMetric(float64(run.requests), "requests")
	}
}
