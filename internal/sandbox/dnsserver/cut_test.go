package dnsserver

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
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

// TestZoneCutFollowsChanges checks that a delegation made, changed or removed after the
// zone answered a name shows in the next answer: the server skips the zone-cut check for a
// zone the store says has no NS set below its apex.
func TestZoneCutFollowsChanges(t *testing.T) {
	st := newStore(t)
	id := newZone(t, st, "example.com")
	apply(t, st, id, simple("x.sub.example.com", "A", 300, "192.0.2.1"))
	srv := New(st, nil)
	nsSet := func(a zones.Action, id string) zones.Change {
		c := simple("sub.example.com", "NS", 300, "ns.elsewhere.net.")
		c.Action = a
		if id != "" {
			c.Set.SetIdentifier, c.Set.Weight = id, ptr(int64(1))
		}
		return c
	}
	steps := []struct {
		name     string
		changes  []zones.Change
		referral bool
	}{
		{"no cut", nil, false},
		{"NS created", []zones.Change{nsSet(zones.Create, "")}, true},
		{"NS upserted", []zones.Change{nsSet(zones.Upsert, "")}, true},
		{"NS deleted", []zones.Change{nsSet(zones.Delete, "")}, false},
		{"weighted NS pair", []zones.Change{nsSet(zones.Create, "a"), nsSet(zones.Create, "b")}, true},
		{"one of the pair deleted", []zones.Change{nsSet(zones.Delete, "a")}, true},
		{"the other deleted", []zones.Change{nsSet(zones.Delete, "b")}, false},
	}
	for _, step := range steps {
		if len(step.changes) > 0 {
			apply(t, st, id, step.changes...)
		}
		r := serveDirect(t, srv, query("x.sub.example.com.", dns.TypeA, 0), true)
		referral := !r.Authoritative && len(r.Ns) > 0 && r.Ns[0].Header().Rrtype == dns.TypeNS
		if referral != step.referral || (!referral && len(answerIPs(r)) != 1) {
			t.Errorf("%s: referral %v, want %v\n%v", step.name, referral, step.referral, r)
		}
	}
}
