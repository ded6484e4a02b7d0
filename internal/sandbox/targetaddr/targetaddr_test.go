package targetaddr

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    map[string]string
	}{
		{in: `{}`, want: map[string]string{}},
		{in: `{"192.0.2.11:8080":"127.0.0.1:18011","[2001:db8::1]:80":"[::1]:9000"}`,
			want: map[string]string{"192.0.2.11:8080": "127.0.0.1:18011", "[2001:db8::1]:80": "[::1]:9000"}},
		{in: `[]`, err: "want a JSON object"},
		{in: `{"192.0.2.11":"127.0.0.1:1"}`, err: `key "192.0.2.11"`},
		{in: `{"192.0.2.11:80":"127.0.0.1"}`, err: `value "127.0.0.1"`},
		{in: `{"192.0.2.11:80":"10.0.0.1:80"}`, err: "not a loopback address"},
		// Not a target's address: "0.0.0.0" is not "any target".
		{in: `{"0.0.0.0:8080":"127.0.0.1:1"}`, err: `key "0.0.0.0:8080": not a target's address (unspecified)`},
		{in: `{"[::]:8080":"127.0.0.1:1"}`, err: `key "[::]:8080": not a target's address (unspecified)`},
		{in: `{"[::ffff:0.0.0.0]:8080":"127.0.0.1:1"}`, err: `not a target's address (unspecified)`},
		{in: `{"224.0.0.1:8080":"127.0.0.1:1"}`, err: `key "224.0.0.1:8080": not a target's address (multicast)`},
		{in: `{"[ff02::1]:8080":"127.0.0.1:1"}`, err: `not a target's address (multicast)`},
		{in: `{"255.255.255.255:8080":"127.0.0.1:1"}`, err: `not a target's address (broadcast)`},
		{in: `{"169.254.169.254:80":"127.0.0.1:1"}`, err: `key "169.254.169.254:80": not a target's address (link-local)`},
		{in: `{"[fe80::1]:80":"127.0.0.1:1"}`, err: `not a target's address (link-local)`},
		// One target under two spellings: refused, not decided by sort order.
		{in: `{"192.0.2.11:8080":"127.0.0.1:1","[::ffff:192.0.2.11]:8080":"127.0.0.1:2"}`, err: `192.0.2.11:8080 is mapped twice`},
	} {
		got, err := Parse([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%s) = %v, want an error containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Fatalf("Parse(%s) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		for k, v := range tc.want {
			if got[netip.MustParseAddrPort(k)] != netip.MustParseAddrPort(v) {
				t.Errorf("Parse(%s)[%s] = %v, want %s", tc.in, k, got[netip.MustParseAddrPort(k)], v)
			}
		}
	}
}

func TestParseFlag(t *testing.T) {
	got, err := ParseFlag(" 192.0.2.11:8080=127.0.0.1:18011, 192.0.2.12:8080=127.0.0.2:18012 ,")
	if err != nil || len(got) != 2 || got[netip.MustParseAddrPort("192.0.2.12:8080")] != netip.MustParseAddrPort("127.0.0.2:18012") {
		t.Fatalf("ParseFlag = %v, %v", got, err)
	}
	if got, err := ParseFlag(""); err != nil || len(got) != 0 {
		t.Errorf("ParseFlag(\"\") = %v, %v; want no mapping", got, err)
	}
	for in, want := range map[string]string{
		"192.0.2.11:8080": "want IP:port=loopbackIP:port",
		"192.0.2.11:8080=127.0.0.1:1,192.0.2.11:8080=127.0.0.1:2":          "mapped twice",
		"192.0.2.11:8080=192.0.2.12:8080":                                  "not a loopback address",
		"192.0.2.11:8080=127.0.0.1:1,[::ffff:192.0.2.11]:8080=127.0.0.1:2": "192.0.2.11:8080 is mapped twice",
		"0.0.0.0:8080=127.0.0.1:1":                                         "not a target's address (unspecified)",
	} {
		if _, err := ParseFlag(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseFlag(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestResolve(t *testing.T) {
	m := New()
	m.Replace(map[netip.AddrPort]netip.AddrPort{netip.MustParseAddrPort("192.0.2.11:8080"): netip.MustParseAddrPort("127.0.0.1:18011")})
	for _, tc := range []struct{ addr, want string }{
		{"192.0.2.11:8080", "127.0.0.1:18011"},
		{"[::ffff:192.0.2.11]:8080", "127.0.0.1:18011"}, // the same IPv4 target, v4-in-v6
		{"127.0.0.3:80", "127.0.0.3:80"},                // loopback is its own backend
		{"[::1]:80", "[::1]:80"},
		{"192.0.2.11:8081", ""}, // another port of a mapped IP is not mapped
		{"10.0.0.1:80", ""},
	} {
		got, err := m.Resolve(tc.addr)
		var nr *NoRouteError
		if tc.want == "" {
			if !errors.As(err, &nr) || !strings.Contains(err.Error(), "no route in the sandbox") {
				t.Errorf("Resolve(%s) = %q, %v; want a NoRouteError", tc.addr, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Resolve(%s) = %q, %v; want %s", tc.addr, got, err, tc.want)
		}
	}
	m.Replace(nil)
	if _, err := m.Resolve("192.0.2.11:8080"); err == nil {
		t.Error("Replace(nil) kept a mapping")
	}
}

// An unmapped target sends no packet: the dialer's socket is never made.
func TestDialerNeverDialsUnmapped(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	m := New()
	m.Replace(map[netip.AddrPort]netip.AddrPort{netip.MustParseAddrPort("192.0.2.11:8080"): netip.MustParseAddrPort(ln.Addr().String())})
	var sockets atomic.Int32
	var dialed atomic.Value
	d := &Dialer{Map: m, Dialer: net.Dialer{Control: func(network, address string, _ syscall.RawConn) error {
		sockets.Add(1)
		dialed.Store(address)
		return nil
	}}}
	c, err := d.DialContext(context.Background(), "tcp", "192.0.2.11:8080")
	if err != nil {
		t.Fatalf("mapped target: %v", err)
	}
	c.Close()
	if sockets.Load() != 1 || dialed.Load() != ln.Addr().String() {
		t.Fatalf("mapped target: %d sockets, to %v; want 1, to %s", sockets.Load(), dialed.Load(), ln.Addr())
	}
	for _, addr := range []string{"192.0.2.12:8080", "192.0.2.11:9", "203.0.113.1:443"} {
		if _, err := d.DialContext(context.Background(), "tcp", addr); !errors.As(err, new(*NoRouteError)) {
			t.Errorf("%s: %v, want a NoRouteError", addr, err)
		}
	}
	if sockets.Load() != 1 {
		t.Errorf("unmapped targets made %d sockets, want none", sockets.Load()-1)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"192.0.2.11:8080":"127.0.0.1:18011"}`))
	f.Add([]byte(`{"[::1]:1":"[::1]:2"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Parse(data)
		if err != nil {
			return
		}
		for _, to := range got {
			if !to.Addr().Unmap().IsLoopback() {
				t.Fatalf("Parse(%q) accepted backend %s", data, to)
			}
		}
	})
}

// TestSet: Set refuses, naming the entry, what Parse would refuse and what only a Go
// caller can build (zero values, port 0, a target given twice as v4 and v4-in-v6), and a
// refused mapping leaves the old one in place.
func TestSet(t *testing.T) {
	ap := netip.MustParseAddrPort
	m := New()
	if err := m.Set(map[netip.AddrPort]netip.AddrPort{ap("[::ffff:192.0.2.11]:8080"): ap("[::ffff:127.0.0.1]:18011")}); err != nil {
		t.Fatal(err)
	}
	if got, err := m.Resolve("192.0.2.11:8080"); err != nil || got != "127.0.0.1:18011" {
		t.Fatalf("Resolve after Set = %q, %v; want 127.0.0.1:18011 (v4-in-v6 stored as v4)", got, err)
	}
	for _, tc := range []struct {
		in   map[netip.AddrPort]netip.AddrPort
		want string
	}{
		{map[netip.AddrPort]netip.AddrPort{{}: ap("127.0.0.1:1")}, `key "invalid AddrPort"`},
		{map[netip.AddrPort]netip.AddrPort{ap("192.0.2.12:0"): ap("127.0.0.1:1")}, `key "192.0.2.12:0"`},
		{map[netip.AddrPort]netip.AddrPort{ap("192.0.2.12:80"): {}}, `"192.0.2.12:80": value "invalid AddrPort"`},
		{map[netip.AddrPort]netip.AddrPort{ap("192.0.2.12:80"): ap("127.0.0.1:0")}, `"192.0.2.12:80": value "127.0.0.1:0"`},
		{map[netip.AddrPort]netip.AddrPort{ap("192.0.2.12:80"): ap("192.0.2.13:80")}, `"192.0.2.12:80": value "192.0.2.13:80" is not a loopback address`},
		{map[netip.AddrPort]netip.AddrPort{ap("192.0.2.12:80"): ap("127.0.0.1:1"), ap("[::ffff:192.0.2.12]:80"): ap("127.0.0.1:2")}, "192.0.2.12:80 is mapped twice"},
	} {
		if err := m.Set(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Set(%v) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
	if got := m.Entries(); len(got) != 1 || got[ap("192.0.2.11:8080")] != ap("127.0.0.1:18011") {
		t.Errorf("after refused Sets the mapping is %v, want the first one", got)
	}
	if _, err := Parse([]byte(`{"192.0.2.12:0": "127.0.0.1:1"}`)); err == nil || !strings.Contains(err.Error(), `key "192.0.2.12:0"`) {
		t.Errorf("Parse of a target port 0: %v, want refused", err)
	}
}
