package dnsserver

import (
	"testing"

	"github.com/miekg/dns"
)

// TestZoneCuts checks which names the zone-cut check answers with a referral: a name at or
// below an NS set strictly below the apex, but not a name a wildcard's NS set would stand in for.
func TestZoneCuts(t *testing.T) {
	st := newStore(t)
	id := newZone(t, st, "example.com")
	apply(t, st, id,
		simple("sub.example.com", "NS", 300, "ns.elsewhere.net."),
		simple("*.wns.example.com", "NS", 300, "ns.elsewhere.net."),
		simple("host.wns.example.com", "A", 300, "192.0.2.1"),
		simple("a.b.example.com", "A", 300, "192.0.2.2"),
	)
	srv := New(st, nil)
	tests := []struct {
		qname    string
		qtype    uint16
		referral bool
		rcode    int
	}{
		{"sub.example.com.", dns.TypeA, true, dns.RcodeSuccess},
		{"x.y.sub.example.com.", dns.TypeA, true, dns.RcodeSuccess},
		{"sub.example.com.", dns.TypeDS, false, dns.RcodeSuccess}, // the parent side answers DS
		{"*.wns.example.com.", dns.TypeA, true, dns.RcodeSuccess}, // the wildcard's own name is a cut
		{"other.wns.example.com.", dns.TypeA, false, dns.RcodeSuccess},
		{"host.wns.example.com.", dns.TypeA, false, dns.RcodeSuccess},
		{"a.b.example.com.", dns.TypeA, false, dns.RcodeSuccess},
		{"b.example.com.", dns.TypeA, false, dns.RcodeSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.qname+dns.TypeToString[tt.qtype], func(t *testing.T) {
			r := serveDirect(t, srv, query(tt.qname, tt.qtype, 0), true)
			if r == nil {
				t.Fatal("no reply")
			}
			referral := !r.Authoritative && len(r.Ns) > 0 && r.Ns[0].Header().Rrtype == dns.TypeNS
			if referral != tt.referral || r.Rcode != tt.rcode {
				t.Fatalf("referral %v rcode %s, want referral %v rcode %s\n%v", referral, dns.RcodeToString[r.Rcode], tt.referral, dns.RcodeToString[tt.rcode], r)
			}
		})
	}
}
