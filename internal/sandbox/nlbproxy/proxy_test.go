package nlbproxy

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
)

// backend is a loopback TCP server that says its name when a connection opens, then
// echoes what it reads.
type backend struct {
	name string
	addr string
}

func startBackend(t *testing.T, name string) *backend {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &backend{name: name, addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				if _, err := io.WriteString(c, name+"\n"); err != nil {
					return
				}
				_, _ = io.Copy(c, c)
			})
		}
	})
	return b
}

// conn is a client connection through the proxy, knowing which backend answered.
type conn struct {
	c       net.Conn
	r       *bufio.Reader
	backend string
}

func dial(t *testing.T, addr string) *conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	r := bufio.NewReader(c)
	name, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("connection through %s: reading the backend's name: %v", addr, err)
	}
	return &conn{c: c, r: r, backend: strings.TrimSpace(name)}
}

// echo sends a line and checks it comes back.
func (c *conn) echo(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(c.c, line+"\n"); err != nil {
		t.Fatalf("write on the %s connection: %v", c.backend, err)
	}
	got, err := c.r.ReadString('\n')
	if err != nil || got != line+"\n" {
		t.Fatalf("echo on the %s connection: %q, %v", c.backend, got, err)
	}
}

func newProxy(t *testing.T, m *targetaddr.Map) *Proxy {
	t.Helper()
	if m == nil {
		m = targetaddr.New()
	}
	p, err := New(Options{Dialer: &targetaddr.Dialer{Map: m}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	return p
}

const (
	lbID = "arn:aws:elasticloadbalancing:us-east-1:123456789012:loadbalancer/net/db/0123456789abcdef"
	lID  = "arn:aws:elasticloadbalancing:us-east-1:123456789012:listener/net/db/0123456789abcdef/fedcba9876543210"
	blue = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/blue/1111111111111111"
	grn  = "arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/green/2222222222222222"
)

// cfgOf is a listener forwarding to blue and green at wb, wg, with their targets.
func cfgOf(blueTargets, greenTargets []string, wb, wg int) Config {
	hc := HealthCheck{Interval: time.Hour, Timeout: time.Second}
	return Config{
		TargetGroups: []TargetGroup{{ID: blue, Targets: blueTargets, HealthCheck: hc}, {ID: grn, Targets: greenTargets, HealthCheck: hc}},
		Listeners:    []Listener{{ID: lID, LoadBalancer: lbID, Addr: "127.0.0.1:0", TargetGroups: []WeightedTargetGroup{{blue, wb}, {grn, wg}}}},
	}
}

func TestNewConnectionsFollowWeights(t *testing.T) {
	b, g := startBackend(t, "blue"), startBackend(t, "green")
	for _, tc := range []struct {
		name        string
		wb, wg      int
		conns       int
		blue, green int
	}{
		{"all blue", 100, 0, 8, 8, 0},
		{"one to three", 1, 3, 8, 2, 6},
		{"all green", 0, 100, 8, 0, 8},
		{"half", 50, 50, 10, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(t, nil)
			if err := p.Apply(cfgOf([]string{b.addr}, []string{g.addr}, tc.wb, tc.wg)); err != nil {
				t.Fatal(err)
			}
			got := map[string]int{}
			for range tc.conns {
				c := dial(t, p.Addr(lID))
				c.echo(t, "ping")
				got[c.backend]++
			}
			if got["blue"] != tc.blue || got["green"] != tc.green {
				t.Fatalf("weights %d/%d: %d connections went blue %d, green %d; want %d, %d", tc.wb, tc.wg, tc.conns, got["blue"], got["green"], tc.blue, tc.green)
			}
		})
	}
}

func TestWeightChangeKeepsExistingConnections(t *testing.T) {
	b, g := startBackend(t, "blue"), startBackend(t, "green")
	p := newProxy(t, nil)
	if err := p.Apply(cfgOf([]string{b.addr}, []string{g.addr}, 100, 0)); err != nil {
		t.Fatal(err)
	}
	old := dial(t, p.Addr(lID))
	if old.backend != "blue" {
		t.Fatalf("first connection went to %s", old.backend)
	}
	old.echo(t, "before")
	if err := p.Apply(cfgOf([]string{b.addr}, []string{g.addr}, 0, 100)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if c := dial(t, p.Addr(lID)); c.backend != "green" {
			t.Fatalf("new connection %d after the weights moved to green went to %s", i, c.backend)
		}
	}
	// The connection made under the old weights still carries bytes both ways, to blue.
	old.echo(t, "after the weight change")
	old.echo(t, strings.Repeat("x", 64<<10))
}

func TestDeregisteredTargetDrains(t *testing.T) {
	b1, b2 := startBackend(t, "blue-1"), startBackend(t, "blue-2")
	g := startBackend(t, "green")
	for _, tc := range []struct {
		name      string
		terminate bool
	}{
		{"connections continue", false},
		{"connection termination", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProxy(t, nil)
			cfg := cfgOf([]string{b1.addr}, []string{g.addr}, 100, 0)
			if err := p.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			old := dial(t, p.Addr(lID))
			old.echo(t, "hello")
			// blue-1 is deregistered (its delay 0 ends the drain at once), blue-2 registered.
			cfg = cfgOf([]string{b2.addr}, []string{g.addr}, 100, 0)
			cfg.TargetGroups[0].ConnectionTermination = tc.terminate
			if err := p.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				if c := dial(t, p.Addr(lID)); c.backend != "blue-2" {
					t.Fatalf("a new connection after blue-1's deregistration went to %s", c.backend)
				}
			}
			if !tc.terminate {
				old.echo(t, "still here")
				return
			}
			// Terminated: the client sees its connection end.
			_ = old.c.SetReadDeadline(time.Now().Add(time.Minute))
			if _, err := old.r.ReadString('\n'); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("the terminated connection still reads: %v", err)
			}
		})
	}
}

func TestDrainingTargetKeepsConnectionsForItsDelay(t *testing.T) {
	b1, b2 := startBackend(t, "blue-1"), startBackend(t, "blue-2")
	p := newProxy(t, nil)
	cfg := cfgOf([]string{b1.addr}, nil, 100, 0)
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	old := dial(t, p.Addr(lID))
	cfg = cfgOf([]string{b2.addr}, nil, 100, 0)
	cfg.TargetGroups[0].DeregistrationDelay = time.Hour
	cfg.TargetGroups[0].ConnectionTermination = true
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	if h := p.TargetHealth(blue)[b1.addr]; h.State != StateDraining {
		t.Fatalf("deregistered target's health %+v, want draining", h)
	}
	if c := dial(t, p.Addr(lID)); c.backend != "blue-2" {
		t.Fatalf("a new connection went to the draining target %s", c.backend)
	}
	old.echo(t, "draining, still served")
}

func TestUnmappedTargetIsNeverDialled(t *testing.T) {
	b := startBackend(t, "mapped")
	m := targetaddr.New()
	m.Replace(map[netip.AddrPort]netip.AddrPort{netip.MustParseAddrPort("192.0.2.11:5432"): netip.MustParseAddrPort(b.addr)})
	p := newProxy(t, m)
	cfg := cfgOf([]string{"192.0.2.11:5432", "192.0.2.99:5432"}, nil, 100, 0)
	cfg.TargetGroups[0].HealthCheck.Interval = 20 * time.Millisecond
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	// Wait for both verdicts (the checks run at once and then every 20 ms).
	var h map[string]Health
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		h = p.TargetHealth(blue)
		if h["192.0.2.11:5432"].State == StateHealthy && h["192.0.2.99:5432"].State == StateUnhealthy {
			break
		}
	}
	if h["192.0.2.11:5432"].State != StateHealthy || !strings.Contains(h["192.0.2.99:5432"].Description, "no route in the sandbox") {
		t.Fatalf("health %+v: want the mapped target healthy, the unmapped one unhealthy with no route in the sandbox", h)
	}
	for range 4 {
		if c := dial(t, p.Addr(lID)); c.backend != "mapped" {
			t.Fatalf("connection went to %s", c.backend)
		}
	}
}

// TestHealthCheckTimeoutIsFailedHealthChecks: a target whose connect never completes (a
// black hole: the dialer's socket waits until the check's timeout) is unhealthy with
// Target.FailedHealthChecks, as an NLB reports it: Target.Timeout is an ALB's reason.
func TestHealthCheckTimeoutIsFailedHealthChecks(t *testing.T) {
	m := targetaddr.New()
	m.Replace(map[netip.AddrPort]netip.AddrPort{netip.MustParseAddrPort("192.0.2.11:5432"): netip.MustParseAddrPort("127.0.0.1:9")})
	blackHole := net.Dialer{ControlContext: func(ctx context.Context, _, _ string, _ syscall.RawConn) error {
		<-ctx.Done() // the SYN is never answered
		return ctx.Err()
	}}
	p, err := New(Options{Dialer: &targetaddr.Dialer{Map: m, Dialer: blackHole}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	cfg := cfgOf([]string{"192.0.2.11:5432"}, nil, 100, 0)
	cfg.TargetGroups[0].HealthCheck = HealthCheck{Interval: 20 * time.Millisecond, Timeout: 20 * time.Millisecond, HealthyThreshold: 2, UnhealthyThreshold: 2}
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	var h Health
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if h = p.TargetHealth(blue)["192.0.2.11:5432"]; h.State == StateUnhealthy {
			break
		}
	}
	if h != (Health{StateUnhealthy, ReasonFailedHealthChecks, "Health checks failed"}) {
		t.Fatalf("health %+v: want unhealthy, Target.FailedHealthChecks, \"Health checks failed\"", h)
	}
}
