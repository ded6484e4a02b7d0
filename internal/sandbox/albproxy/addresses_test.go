package albproxy

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/crossfade-io/crossfade/internal/sandbox/targetaddr"
)

// sockets records every socket a Dialer opens, by the address it connects to.
type sockets struct {
	mu    sync.Mutex
	addrs []string
}

// control records the socket, and stops it before it connects unless it is to loopback:
// a broken proxy fails the test without sending a packet off this machine.
func (s *sockets) control(_, address string, _ syscall.RawConn) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addrs = append(s.addrs, address)
	if ap, err := netip.ParseAddrPort(address); err != nil || !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("test: refused a socket to %s: not loopback", address)
	}
	return nil
}

// outside returns the addresses of sockets opened to anything but allowed.
func (s *sockets) outside(allowed ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, a := range s.addrs {
		if !slices.Contains(allowed, a) {
			out = append(out, a)
		}
	}
	return out
}

func (s *sockets) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.addrs)
}

// startMappedProxy starts a proxy that dials through m, recording its sockets.
func startMappedProxy(t *testing.T, m *targetaddr.Map, cfg Config) (*Proxy, *sockets) {
	t.Helper()
	socks := &sockets{}
	p := New(Options{Dialer: &targetaddr.Dialer{Map: m, Dialer: net.Dialer{Control: socks.control}}})
	if err := p.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	if err := p.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	return p, socks
}

func mapping(pairs ...string) map[netip.AddrPort]netip.AddrPort {
	m := map[netip.AddrPort]netip.AddrPort{}
	for i := 0; i < len(pairs); i += 2 {
		m[netip.MustParseAddrPort(pairs[i])] = netip.MustParseAddrPort(pairs[i+1])
	}
	return m
}

// wantNoRoute fails unless h is the health of a target with no route in the sandbox.
func wantNoRoute(t *testing.T, addr string, h Health) {
	t.Helper()
	if h.State != StateUnhealthy || h.Reason != ReasonFailedHealthChecks ||
		!strings.Contains(h.Description, "no route in the sandbox to "+addr) {
		t.Errorf("%s: %+v, want unhealthy, %s, \"no route in the sandbox to %s\"", addr, h, ReasonFailedHealthChecks, addr)
	}
}

// TestTargetAddresses: the proxy reaches targets only through its Dialer's map. A mapped
// TEST-NET-1 target is health checked and served at its loopback backend; an unmapped one
// is unhealthy ("no route in the sandbox"), gets no request and no socket is ever opened
// for it, even when it is the only target (503 rather than fail-open); RoutesChanged
// makes a remap take effect at once, both ways.
func TestTargetAddresses(t *testing.T) {
	a, b := newBackend(t, "a"), newBackend(t, "b")
	const mapped, unmapped = "192.0.2.11:8080", "192.0.2.12:8080"
	m := targetaddr.New()
	m.Replace(mapping(mapped, a.addr()))
	cfg := oneListener(forward("g", 1), []Rule{{ID: "only-unmapped", Priority: 1,
		Conditions: []Condition{{Field: FieldPathPattern, Values: []string{"/lonely"}}}, Action: forward("lonely", 1)}},
		TargetGroup{ID: "g", Targets: []string{mapped, unmapped}, HealthCheck: fastHC},
		TargetGroup{ID: "lonely", Targets: []string{"192.0.2.13:80", "i-0abc:8080"}, HealthCheck: fastHC})
	p, socks := startMappedProxy(t, m, cfg)
	url := "http://" + p.Addr("l1")
	c := newClient(t)

	h := waitHealth(t, p, "g", StateHealthy, mapped)
	wantNoRoute(t, unmapped, h[unmapped])
	lonely := waitHealth(t, p, "lonely", StateUnhealthy, "192.0.2.13:80", "i-0abc:8080")
	wantNoRoute(t, "192.0.2.13:80", lonely["192.0.2.13:80"])
	wantNoRoute(t, "i-0abc:8080", lonely["i-0abc:8080"])
	for range 20 {
		if r := get(c, url+"/", ""); r.status != http.StatusOK || r.backend != "a" {
			t.Fatalf("request to group g: %+v, want 200 from a, the only target with a route", r)
		}
		// A group whose targets all lack a route does not fail open to them.
		if r := get(c, url+"/lonely", ""); r.status != http.StatusServiceUnavailable {
			t.Fatalf("request to a group without routes: %+v, want 503", r)
		}
	}
	if out := socks.outside(a.addr()); len(out) > 0 || socks.count() == 0 || a.served.Load() != 20 {
		t.Fatalf("sockets to %v besides %d to a's %s (which served %d requests); want only a's", out, socks.count()-len(out), a.addr(), a.served.Load())
	}

	// Remap: the unmapped target gets b, the mapped one loses its route.
	m.Replace(mapping(unmapped, b.addr()))
	p.RoutesChanged()
	wantNoRoute(t, mapped, p.TargetHealth("g")[mapped]) // at once, not at the next check
	// Checked at once (fastHC's interval would do too; its healthy threshold of 2 would not
	// let one check make an unhealthy target healthy).
	waitHealth(t, p, "g", StateHealthy, unmapped)
	for range 10 {
		if r := get(c, url+"/", ""); r.status != http.StatusOK || r.backend != "b" {
			t.Fatalf("after the remap: %+v, want 200 from b", r)
		}
	}
	if a.served.Load() != 20 {
		t.Errorf("a served %d requests, want still 20: its target has no route now", a.served.Load())
	}
	if out := socks.outside(a.addr(), b.addr()); len(out) > 0 {
		t.Errorf("sockets to %v: the proxy dialled something other than the loopback backends", out)
	}
}

// TestTargetAddressesChecksDisabled: without health checks a target is unavailable and
// gets traffic, as on ALB, but one without a route is unhealthy and gets none.
func TestTargetAddressesChecksDisabled(t *testing.T) {
	a := newBackend(t, "a")
	const mapped, unmapped = "192.0.2.11:8080", "192.0.2.12:8080"
	m := targetaddr.New()
	m.Replace(mapping(mapped, a.addr()))
	p, socks := startMappedProxy(t, m, oneListener(forward("g", 1), nil,
		TargetGroup{ID: "g", Targets: []string{mapped, unmapped}, HealthCheck: HealthCheck{Disabled: true}}))
	h := p.TargetHealth("g")
	if h[mapped] != hHCOff {
		t.Errorf("%s: %+v, want %+v", mapped, h[mapped], hHCOff)
	}
	wantNoRoute(t, unmapped, h[unmapped])
	c := newClient(t)
	for range 10 {
		if r := get(c, "http://"+p.Addr("l1")+"/", ""); r.status != http.StatusOK || r.backend != "a" {
			t.Fatalf("%+v, want 200 from a", r)
		}
	}
	if out := socks.outside(a.addr()); len(out) > 0 {
		t.Errorf("sockets to %v, want only a's %s", out, a.addr())
	}

	// The route appears: the target is unavailable, like any target without checks.
	m.Replace(mapping(mapped, a.addr(), unmapped, a.addr()))
	p.RoutesChanged()
	if got := p.TargetHealth("g")[unmapped]; got != hHCOff {
		t.Errorf("%s mapped: %+v, want %+v", unmapped, got, hHCOff)
	}
}
