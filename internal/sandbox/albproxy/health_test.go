package albproxy

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHealthThresholds: a target that starts failing its health checks turns unhealthy
// only after UnhealthyThreshold failed checks, then gets no traffic; it comes back after
// HealthyThreshold passed checks.
func TestHealthThresholds(t *testing.T) {
	a, b := newBackend(t, "a"), newBackend(t, "b")
	p := startProxy(t, oneListener(forward("g", 1), nil, tgOf("g", 0, a, b)))
	waitHealth(t, p, "g", StateHealthy, a.addr(), b.addr())
	c := newClient(t)
	url := "http://" + p.Addr("l1") + "/"

	failedBefore := b.hcFailed.Load()
	b.healthCode.Store(http.StatusInternalServerError)
	h := waitHealth(t, p, "g", StateUnhealthy, b.addr())
	if n := b.hcFailed.Load() - failedBefore; n < int64(fastHC.UnhealthyThreshold) {
		t.Errorf("unhealthy after %d failed checks, want %d", n, fastHC.UnhealthyThreshold)
	}
	if got := h[b.addr()]; got.Reason != ReasonResponseCodeMismatch || got.Description != "Health checks failed with these codes: [500]" {
		t.Errorf("unhealthy target reports %+v", got)
	}
	if h[a.addr()].State != StateHealthy {
		t.Errorf("the other target is %+v", h[a.addr()])
	}
	before := b.served.Load()
	for _, r := range sendLoop(c, url, 200, 4) {
		if r.err != nil || r.status != http.StatusOK || r.backend != "a" {
			t.Fatalf("with b unhealthy: %+v, want 200 from a", r)
		}
	}
	if n := b.served.Load() - before; n != 0 {
		t.Errorf("unhealthy target served %d requests", n)
	}

	passedBefore := b.hcPassed.Load()
	b.healthCode.Store(http.StatusOK)
	waitHealth(t, p, "g", StateHealthy, b.addr())
	if n := b.hcPassed.Load() - passedBefore; n < int64(fastHC.HealthyThreshold) {
		t.Errorf("healthy again after %d passed checks, want %d", n, fastHC.HealthyThreshold)
	}
	seen := map[string]int{}
	for _, r := range sendLoop(c, url, 100, 1) {
		seen[r.backend]++
	}
	if seen["a"] != 50 || seen["b"] != 50 {
		t.Errorf("round-robin over two healthy targets gave %v, want 50/50", seen)
	}
}

// TestHealthStates checks the state and reason each kind of target reports.
func TestHealthStates(t *testing.T) {
	closed := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	tests := []struct {
		name   string
		setup  func(b *backend)
		target func(b *backend) string
		hc     HealthCheck
		inUse  bool
		want   Health
	}{
		{name: "healthy", inUse: true, want: hHealthy},
		{name: "response code mismatch", inUse: true, setup: func(b *backend) { b.healthCode.Store(404) },
			want: Health{StateUnhealthy, ReasonResponseCodeMismatch, "Health checks failed with these codes: [404]"}},
		{name: "matcher range accepts a redirect", inUse: true, setup: func(b *backend) { b.healthCode.Store(302) },
			hc: HealthCheck{Matcher: "200-399"}, want: hHealthy},
		{name: "timeout", inUse: true, setup: func(b *backend) { b.healthWait.Store(int64(100 * time.Millisecond)) },
			want: Health{StateUnhealthy, ReasonTimeout, "Request timed out"}},
		{name: "connection refused", inUse: true, target: func(*backend) string { return closed },
			want: Health{StateUnhealthy, ReasonFailedHealthChecks, "Health checks failed"}},
		{name: "group not used by a listener", inUse: false, want: hNotInUse},
		{name: "health checks disabled", inUse: true, hc: HealthCheck{Disabled: true}, want: hHCOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend(t, "b")
			if tt.setup != nil {
				tt.setup(b)
			}
			addr := b.addr()
			if tt.target != nil {
				addr = tt.target(b)
			}
			hc := fastHC
			if tt.hc.Matcher != "" {
				hc.Matcher = tt.hc.Matcher
			}
			hc.Disabled = tt.hc.Disabled
			tg := TargetGroup{ID: "g", Targets: []string{addr}, HealthCheck: hc}
			def := forward()
			if tt.inUse {
				def = forward("g", 1)
			}
			p := startProxy(t, oneListener(def, nil, tg))
			got := waitHealth(t, p, "g", tt.want.State, addr)[addr]
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestInitialStates: a new target is initial (Elb.RegistrationInProgress) until its first
// check ends, then, while it fails fewer than UnhealthyThreshold checks,
// Elb.InitialHealthChecking. A group that comes into use starts its targets over.
func TestInitialStates(t *testing.T) {
	b := newBackend(t, "b")
	b.healthWait.Store(int64(time.Second)) // the first check hangs until its timeout
	hc := HealthCheck{Path: "/health", Interval: 600 * time.Millisecond, Timeout: 300 * time.Millisecond,
		HealthyThreshold: 2, UnhealthyThreshold: 3}
	cfg := oneListener(forward("g", 1), nil, TargetGroup{ID: "g", Targets: []string{b.addr()}, HealthCheck: hc})
	p := startProxy(t, cfg)
	if got := p.TargetHealth("g")[b.addr()]; got != hInitial {
		t.Errorf("right after registration: %+v, want %+v", got, hInitial)
	}
	deadline := time.Now().Add(2 * time.Second)
	for p.TargetHealth("g")[b.addr()] != hChecking {
		if time.Now().After(deadline) {
			t.Fatalf("after one failed check: %+v, want %+v", p.TargetHealth("g")[b.addr()], hChecking)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Out of use and back: the target is unused, then initial again.
	b.healthWait.Store(0)
	cfg.LoadBalancers[0].Listeners[0].DefaultAction = forward()
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if got := p.TargetHealth("g")[b.addr()]; got != hNotInUse {
		t.Errorf("out of use: %+v", got)
	}
	cfg.LoadBalancers[0].Listeners[0].DefaultAction = forward("g", 0) // weight 0 still uses the group
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if got := p.TargetHealth("g")[b.addr()]; got.State != StateInitial {
		t.Errorf("back in use: %+v, want initial", got)
	}
	waitHealth(t, p, "g", StateHealthy, b.addr()) // one passed check is enough for a new target
}

// TestFailOpen: when every target of the group fails its health checks, the proxy routes
// to all of them, as ALB fails open, rather than answering 503.
func TestFailOpen(t *testing.T) {
	a, b := newBackend(t, "a"), newBackend(t, "b")
	a.healthCode.Store(http.StatusInternalServerError)
	b.healthCode.Store(http.StatusInternalServerError)
	p := startProxy(t, oneListener(forward("g", 1), nil, tgOf("g", 0, a, b)))
	waitHealth(t, p, "g", StateUnhealthy, a.addr(), b.addr())
	seen := map[string]int{}
	for _, r := range sendLoop(newClient(t), "http://"+p.Addr("l1")+"/", 100, 1) {
		if r.err != nil || r.status != http.StatusOK {
			t.Fatalf("fail-open request: %+v", r)
		}
		seen[r.backend]++
	}
	if seen["a"] != 50 || seen["b"] != 50 {
		t.Errorf("fail-open spread %v, want 50/50 round-robin", seen)
	}
	// One healthy target ends fail-open: it alone gets the traffic.
	a.healthCode.Store(http.StatusOK)
	waitHealth(t, p, "g", StateHealthy, a.addr())
	for _, r := range sendLoop(newClient(t), "http://"+p.Addr("l1")+"/", 20, 1) {
		if r.backend != "a" {
			t.Fatalf("with a healthy again a request went to %q", r.backend)
		}
	}
}

// TestDrain deregisters a target while a slow request is in flight on it and clients keep
// sending: the slow request completes with 200, no request sent after Apply reaches the
// target, none fails, and the target reports draining for the deregistration delay.
func TestDrain(t *testing.T) {
	a1, a2 := newBackend(t, "a1"), newBackend(t, "a2")
	const delay = 600 * time.Millisecond
	cfg := oneListener(forward("g", 1), nil, tgOf("g", delay, a1, a2))
	p := startProxy(t, cfg)
	waitHealth(t, p, "g", StateHealthy, a1.addr(), a2.addr())
	c := newClient(t)
	url := "http://" + p.Addr("l1") + "/"

	// Two slow requests in a row: round-robin over two targets puts one on each.
	slow := make(chan result, 2)
	for range 2 {
		go func() { slow <- get(c, url+"?sleep=300ms", "") }()
	}
	for a1.inflight.Load() == 0 || a2.inflight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}

	tr := startTraffic(c, url, 4, func(backend string) bool { return backend == "a1" })
	time.Sleep(30 * time.Millisecond)
	cfg.TargetGroups[0].Targets = []string{a2.addr()}
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	tr.switched.Store(true)
	drainStart := time.Now()
	if got := p.TargetHealth("g")[a1.addr()]; got != hDraining {
		t.Errorf("deregistered target reports %+v, want %+v", got, hDraining)
	}

	got := map[string]bool{}
	for range 2 {
		r := <-slow
		if r.err != nil || r.status != http.StatusOK {
			t.Errorf("slow request in flight during deregistration: %+v", r)
		}
		got[r.backend] = true
	}
	if !got["a1"] {
		t.Errorf("no slow request completed on the draining target: %v", got)
	}
	// The in-flight request is done, but ALB keeps the target draining for the delay.
	if time.Since(drainStart) < delay-100*time.Millisecond {
		if h := p.TargetHealth("g")[a1.addr()]; h.State != StateDraining {
			t.Errorf("target with nothing in flight, inside the delay: %+v, want draining", h)
		}
	}
	time.Sleep(time.Until(drainStart.Add(delay + 50*time.Millisecond)))
	tr.stopTraffic()

	if _, ok := p.TargetHealth("g")[a1.addr()]; ok {
		t.Errorf("target still listed after the deregistration delay: %v", p.TargetHealth("g"))
	}
	if len(tr.failures) > 0 {
		t.Errorf("%d requests failed during the drain, first %+v", len(tr.failures), tr.failures[0])
	}
	if tr.after == 0 || tr.afterOnGone > 0 {
		t.Errorf("%d of %d requests sent after deregistration reached the draining target", tr.afterOnGone, tr.after)
	}

	// Registering it again is a new registration: initial, then healthy.
	cfg.TargetGroups[0].Targets = []string{a2.addr(), a1.addr()}
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if h := p.TargetHealth("g")[a1.addr()]; h.State != StateInitial && h.State != StateHealthy {
		t.Errorf("re-registered target: %+v", h)
	}
	waitHealth(t, p, "g", StateHealthy, a1.addr())
}

// TestDrainZeroDelay: with a deregistration delay of 0 the target is gone at once, while
// its in-flight request still completes.
func TestDrainZeroDelay(t *testing.T) {
	a1, a2 := newBackend(t, "a1"), newBackend(t, "a2")
	cfg := oneListener(forward("g", 1), nil, tgOf("g", 0, a1, a2))
	p := startProxy(t, cfg)
	waitHealth(t, p, "g", StateHealthy, a1.addr(), a2.addr())
	c := newClient(t)
	slow := make(chan result, 2)
	for range 2 {
		go func() { slow <- get(c, "http://"+p.Addr("l1")+"/?sleep=200ms", "") }()
	}
	for a1.inflight.Load() == 0 || a2.inflight.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	cfg.TargetGroups[0].Targets = []string{a2.addr()}
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.TargetHealth("g")[a1.addr()]; ok {
		t.Error("target with delay 0 still listed")
	}
	for range 2 {
		if r := <-slow; r.status != http.StatusOK {
			t.Errorf("in-flight request: %+v", r)
		}
	}
}

// TestApplyErrorsChangeNothing: an invalid config is refused with the object named.
func TestApplyErrorsChangeNothing(t *testing.T) {
	a := newBackend(t, "a")
	cfg := oneListener(forward("g", 1), nil, tgOf("g", 0, a))
	p := startProxy(t, cfg)
	bad := oneListener(forward("g", 1000), nil, tgOf("g", 0, a))
	err := p.Apply(bad)
	if err == nil || !strings.Contains(err.Error(), "weight 1000") {
		t.Fatalf("Apply(bad) = %v", err)
	}
	waitHealth(t, p, "g", StateHealthy, a.addr())
	if r := get(newClient(t), "http://"+p.Addr("l1")+"/", ""); r.status != http.StatusOK {
		t.Errorf("after a refused Apply: %+v", r)
	}
}
