package dnsserver

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// fuzzStore is a zone with one of each answer path, so that fuzzed queries reach them.
func fuzzStore(t testing.TB) *zones.Store {
	st := newStore(t)
	id := newZone(t, st, "example.com")
	other := newZone(t, st, "other.test")
	apply(t, st, other, simple("www.other.test", "A", 60, "198.51.100.1"))
	apply(t, st, id,
		simple("www.example.com", "A", 300, "192.0.2.1", "192.0.2.2"),
		simple("www.example.com", "TXT", 300, `"a"`, `"b"`),
		simple("cname.example.com", "CNAME", 60, "www.other.test."),
		simple("loop1.example.com", "CNAME", 60, "loop2.example.com."),
		simple("loop2.example.com", "CNAME", 60, "loop1.example.com."),
		simple("*.wild.example.com", "A", 300, "192.0.2.99"),
		simple("sub.example.com", "NS", 300, "ns.sub.example.com."),
		simple("ns.sub.example.com", "A", 300, "192.0.2.53"),
		weighted("w.example.com", "A", "a", 1, "192.0.2.10"),
		weighted("w.example.com", "A", "b", 0, "192.0.2.11"),
		alias("example.com", "A", id, "w.example.com", true),
		failover("fo.example.com", zones.Primary, "hc", "192.0.2.31"),
		failover("fo.example.com", zones.Secondary, "", "192.0.2.32"),
	)
	return st
}

// FuzzServeDNS feeds arbitrary packets to ServeDNS: whatever unpacks must be answered
// without a panic, with a reply that unpacks again.
func FuzzServeDNS(f *testing.F) {
	seed := func(m *dns.Msg) {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, true)
	}
	seed(query("www.example.com.", dns.TypeA, 0))
	seed(query("WWW.example.COM.", dns.TypeTXT, 1232))
	seed(query("a.wild.example.com.", dns.TypeANY, 4096))
	seed(query("loop1.example.com.", dns.TypeA, 0))
	seed(query("x.sub.example.com.", dns.TypeA, 0))
	seed(query("example.com.", dns.TypeA, 512))
	seed(query("fo.example.com.", dns.TypeA, 0))
	seed(query("nope.example.org.", dns.TypeMX, 0))
	notify := query("example.com.", dns.TypeSOA, 0)
	notify.Opcode = dns.OpcodeNotify
	seed(notify)

	srv := New(fuzzStore(f), nil)
	f.Fuzz(func(t *testing.T, packet []byte, udp bool) {
		// The UDP listener's own path: raw bytes in, raw bytes out.
		rp := newReply()
		if wire := srv.answerPacket(rp, new(dns.Msg), packet); wire != nil {
			checkWire(t, packet, wire)
		}

		req := new(dns.Msg)
		if err := req.Unpack(packet); err != nil {
			return
		}
		w := newRecorder(udp)
		srv.ServeDNS(w, req)
		if w.writes == 0 {
			if !req.Response {
				t.Fatalf("no reply to a query")
			}
			return
		}
		checkWire(t, packet, w.wrote)
	})
}

// checkWire checks that a reply unpacks, answers the packet's id and packs again.
func checkWire(t *testing.T, packet, wire []byte) {
	t.Helper()
	r := new(dns.Msg)
	if err := r.Unpack(wire); err != nil {
		t.Fatalf("reply does not unpack: %v", err)
	}
	if r.Id != binaryID(packet) || !r.Response {
		t.Fatalf("reply id %d QR %v to packet id %d", r.Id, r.Response, binaryID(packet))
	}
	if _, err := r.Pack(); err != nil {
		t.Fatalf("reply does not pack again: %v", err)
	}
}
