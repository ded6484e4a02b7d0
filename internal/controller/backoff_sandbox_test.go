package controller

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox/faults"
	"github.com/crossfade-io/crossfade/internal/sandbox/sandboxtest"
	"github.com/crossfade-io/crossfade/internal/source"
)

// Issue 26, bullet 3: with Route 53 throttling every call, a controller whose objects keep
// changing must not reconcile, and so re-list its zone, at every change: that feeds the
// account's throttling and starves a cutover running in the same account.

const (
	// backoffFaultWindow is how long Route 53 throttles every call, as the issue states it.
	backoffFaultWindow = time.Minute
	// backoffChangeEvery is how often one object changes, as in the report.
	backoffChangeEvery = 400 * time.Millisecond
	// backoffObjects is how many objects the changes go round.
	backoffObjects = 5
)

// changingObjects is an in-memory objects source (the subject is the loop, not
// Kubernetes): DNSEndpoints, one of which its run changes every backoffChangeEvery,
// signalling each change as the Watcher does (one pending signal at most).
type changingObjects struct {
	changed chan struct{}

	mu      sync.Mutex
	version int
}

func newChangingObjects() *changingObjects {
	return &changingObjects{changed: make(chan struct{}, 1)}
}

func (o *changingObjects) Changed() <-chan struct{} { return o.changed }

func (o *changingObjects) Snapshot() (*source.Snapshot, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	snap := &source.Snapshot{}
	for i, ip := range o.targetsLocked() {
		snap.DNSEndpoints = append(snap.DNSEndpoints, dnsEndpoint(fmt.Sprintf("app%d", i),
			source.DNSEndpointRecord{DNSName: fmt.Sprintf("app%d.example.com", i), RecordType: "A", Targets: []string{ip}}))
	}
	return snap, true
}

// targets returns each object's address, by object.
func (o *changingObjects) targets() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.targetsLocked()
}

// targetsLocked returns each object's address: change v gave object v%backoffObjects the
// address 10.0.<v/250>.<v%250>.
func (o *changingObjects) targetsLocked() []string {
	out := make([]string, backoffObjects)
	for i := range out {
		out[i] = fmt.Sprintf("192.0.2.%d", i+1)
	}
	for v := 1; v <= o.version; v++ {
		out[v%backoffObjects] = fmt.Sprintf("10.0.%d.%d", v/250, v%250)
	}
	return out
}

// run changes one object every backoffChangeEvery until ctx ends.
func (o *changingObjects) run(ctx context.Context) {
	t := time.NewTicker(backoffChangeEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		o.mu.Lock()
		o.version++
		o.mu.Unlock()
		select {
		case o.changed <- struct{}{}:
		default:
		}
	}
}

// scrapeBackoff reads the backoff's series from a /metrics URL.
func scrapeBackoff(t *testing.T, url string) (failures, backoff float64) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	found := map[string]bool{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		switch name {
		case NameReconcileFailures:
			failures = v
		case NameReconcileBackoff:
			backoff = v
		default:
			continue
		}
		if err != nil {
			t.Fatalf("%s: line %q: %v", url, sc.Text(), err)
		}
		found[name] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{NameReconcileFailures, NameReconcileBackoff} {
		if !found[n] {
			t.Fatalf("%s has no %s", url, n)
		}
	}
	return failures, backoff
}

// TestBackoffBoundsListings: a controller (the real Route 53 provider through the AWS SDK
// and its retries, behind the zone cache) whose objects change every 400 ms faces a Route
// 53 that throttles every call for a minute. Its zone is listed no more often than the
// backoff schedule allows (a bound computed from the configuration: every reconcile lists
// the zone once at most, and every failed one is followed by at least the floor of its
// backoff), /metrics shows the failures and the backoff, and once Route 53 answers again
// the zone converges to the objects' records and the backoff drops to 0.
func TestBackoffBoundsListings(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox and throttles it for a minute")
	}
	ctx := context.Background()
	sb := sandboxtest.Start(t)
	z, _, err := sb.Store().CreateZone("example.com", "ref", "", false)
	if err != nil {
		t.Fatal(err)
	}
	zone := provider.Zone{ID: z.ID, Name: "example.com"}
	newProvider := func() *route53.Provider {
		// A small SDK backoff keeps the retries quick: the sandbox needs no time to recover.
		p, err := route53.New(ctx, route53.Config{Endpoint: sb.APIURL(), Region: "us-east-1", MaxBackoff: 5 * time.Millisecond,
			Credentials: credentials.NewStaticCredentialsProvider("test", "test", "")})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	reg, err := registry.New(registry.Config{OwnerID: "blue"})
	if err != nil {
		t.Fatal(err)
	}
	src, err := source.New(source.Config{})
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	bm, err := NewBackoffMetrics(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m.Handler(func() error { return nil }))
	defer srv.Close()
	metricsURL := srv.URL + metrics.PathMetrics

	objs := newChangingObjects()
	// The schedule is the defaults' scaled down 10× for the base and 75× for the cap, so
	// that the minute covers the doubling and a long stretch at the cap, and the test
	// converges within a second or two of Route 53 coming back.
	cfg := Config{Syncer: &Syncer{Provider: cache.New(newProvider(), cache.Config{}), Registry: reg, Policy: changes.Sync},
		Source: src, BackoffBase: 100 * time.Millisecond, BackoffMax: 4 * time.Second, BackoffMetrics: bm}
	if os.Getenv("CROSSFADE_BACKOFF_DEFAULTS") == "1" {
		// BENCHMARKS.md's figure for the defaults; it converges only about a minute
		// after the faults end (the wait reached by then).
		cfg.BackoffBase, cfg.BackoffMax = DefaultBackoffBase, DefaultBackoffMax
	}
	ctl, err := New(objs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		stop()
		wg.Wait()
	}()
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = ctl.Run(runCtx)
	}()
	changeCtx, stopChanging := context.WithCancel(runCtx)
	go func() {
		defer wg.Done()
		objs.run(changeCtx)
	}()

	reader := newProvider()
	// converged reports whether the zone holds each object's A record as it is now.
	converged := func() (bool, string) {
		recs, err := reader.Records(ctx, zone)
		if err != nil {
			return false, err.Error()
		}
		got := map[string]string{}
		for _, r := range recs {
			if r.Type == endpoint.TypeA {
				got[r.Name] = strings.Join(r.Targets, ",")
			}
		}
		for i, ip := range objs.targets() {
			if n := fmt.Sprintf("app%d.example.com", i); got[n] != ip {
				return false, fmt.Sprintf("%s is %q, want %q", n, got[n], ip)
			}
		}
		return true, ""
	}
	waitConverged := func(what string) {
		t.Helper()
		// A liveness bound, not a performance figure: far above the schedule's cap.
		deadline := time.Now().Add(time.Minute)
		for {
			ok, why := converged()
			if ok {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the zone did not converge: %s", what, why)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// Healthy first: the records are written and the cache holds the zone.
	waitConverged("before the faults")
	if f, b := scrapeBackoff(t, metricsURL); f != 0 || b != 0 {
		t.Fatalf("healthy: %s %v, %s %v; want 0 and 0", NameReconcileFailures, f, NameReconcileBackoff, b)
	}

	listings := func() int { return opCalls(sandboxtest.APICalls(t, sb), "ListResourceRecordSets") }
	before := listings()
	start := time.Now()
	putFaults(t, sb, faults.Config{ThrottleRate: 1})
	time.Sleep(backoffFaultWindow)
	failures, backoff := scrapeBackoff(t, metricsURL)
	putFaults(t, sb, faults.Config{})
	window := time.Since(start)
	during := listings() - before
	stopChanging()

	// Every listing request is one attempt of the one listing a reconcile makes at most;
	// the reconciles that fail start no closer than their backoff's floor, and one more may
	// have been on its way when the faults began.
	attempts := route53.DefaultMaxRetries + 1
	starts := newBackoff(cfg.BackoffBase, cfg.BackoffMax, nil).maxStarts(window) + 1
	bound := starts * attempts
	t.Logf("%v of throttling: %d ListResourceRecordSets requests (bound %d: %d reconciles × %d attempts); %v failed reconciles, backoff %vs at the end",
		window.Round(time.Millisecond), during, bound, starts, attempts, failures, backoff)
	if during > bound {
		t.Errorf("%d ListResourceRecordSets requests in %v of throttling, want at most %d (%d reconciles × %d attempts): the zone is listed more often than the backoff allows",
			during, window.Round(time.Millisecond), bound, starts, attempts)
	}
	if failures < 1 || backoff <= 0 || backoff > cfg.BackoffMax.Seconds() {
		t.Errorf("/metrics while throttled: %s %v, %s %v; want at least 1 failure and a backoff in (0, %v]",
			NameReconcileFailures, failures, NameReconcileBackoff, backoff, cfg.BackoffMax.Seconds())
	}

	waitConverged("after the faults")
	// The reconcile that converged has reported by the time the next one starts; the
	// gauge is read once the zone is right, so poll it within the same liveness bound.
	deadline := time.Now().Add(time.Minute)
	for {
		f, b := scrapeBackoff(t, metricsURL)
		if b == 0 {
			if f < failures {
				t.Errorf("%s went down from %v to %v", NameReconcileFailures, failures, f)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("converged, but %s is still %v", NameReconcileBackoff, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ok, why := converged(); !ok {
		t.Errorf("after the backoff ended: %s", why)
	}
}
