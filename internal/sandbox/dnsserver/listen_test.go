package dnsserver

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestListenSamePort checks that port 0 gives UDP and TCP one port and both answer.
func TestListenSamePort(t *testing.T) {
	st := newStore(t)
	id := newZone(t, st, "example.com")
	apply(t, st, id, simple("www.example.com", "A", 300, "192.0.2.1"))
	udpAddr, tcpAddr := serve(t, st)
	if udpAddr != tcpAddr || strings.HasSuffix(udpAddr, ":0") {
		t.Fatalf("udp %s and tcp %s differ or are unbound", udpAddr, tcpAddr)
	}
	for _, network := range []string{"udp", "tcp"} {
		if r := exchange(t, network, udpAddr, query("www.example.com.", dns.TypeA, 0)); len(r.Answer) != 1 {
			t.Errorf("%s: answer %v", network, r.Answer)
		}
	}
}

// TestListenAllAddresses binds the unspecified address (a dual-stack socket where the host
// has IPv6) and queries it over IPv4 loopback, so that replies go to IPv4-mapped addresses.
func TestListenAllAddresses(t *testing.T) {
	st := newStore(t)
	id := newZone(t, st, "example.com")
	apply(t, st, id, simple("www.example.com", "A", 300, "192.0.2.1"))
	ctx, cancel := context.WithCancel(context.Background())
	readyc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- New(st, nil).ListenAndServe(ctx, ":0", func(udp, _ net.Addr) { readyc <- udp })
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("ListenAndServe: %v", err)
		}
	})
	var port int
	select {
	case a := <-readyc:
		port = a.(*net.UDPAddr).Port
	case err := <-errc:
		t.Fatalf("ListenAndServe: %v", err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	for _, network := range []string{"udp", "tcp"} {
		if r := exchange(t, network, addr, query("www.example.com.", dns.TypeA, 0)); len(r.Answer) != 1 {
			t.Errorf("%s: answer %v", network, r.Answer)
		}
	}
}

// TestListenStopsCleanly checks that cancelling the context stops the server, even with a
// TCP client idling on an open connection, and leaves no goroutine behind.
func TestListenStopsCleanly(t *testing.T) {
	st := newStore(t)
	id := newZone(t, st, "example.com")
	apply(t, st, id, simple("www.example.com", "A", 300, "192.0.2.1"))
	before := runtime.NumGoroutine()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	readyc := make(chan net.Addr, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- New(st, nil).ListenAndServe(ctx, "127.0.0.1:0", func(_, tcp net.Addr) { readyc <- tcp })
	}()
	var addr string
	select {
	case a := <-readyc:
		addr = a.String()
	case err := <-errc:
		t.Fatalf("ListenAndServe: %v", err)
	}
	conn, err := (&dns.Client{Net: "tcp"}).Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, _, err := (&dns.Client{Net: "tcp"}).ExchangeWithConn(query("www.example.com.", dns.TypeA, 0), conn); err != nil {
		t.Fatal(err)
	}
	udp := exchange(t, "udp", addr, query("www.example.com.", dns.TypeA, 0))
	if len(udp.Answer) != 1 {
		t.Fatalf("udp answer %v", udp.Answer)
	}

	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("ListenAndServe returned %v after cancel, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ListenAndServe did not return after cancel")
	}
	conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines after stop, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Errorf("TCP still accepts after stop")
	}
}

// TestListenErrors checks that binding failures are reported, not hidden.
func TestListenErrors(t *testing.T) {
	st := newStore(t)
	taken, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	for _, addr := range []string{"no-port", taken.LocalAddr().String()} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := New(st, nil).ListenAndServe(ctx, addr, func(net.Addr, net.Addr) { t.Errorf("%s: ready called", addr) })
		cancel()
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("ListenAndServe(%q) = %v, want a bind error", addr, err)
		}
	}
}
