package dnsserver

import (
	"slices"
	"sort"
	"testing"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// TestAnswersFollowChanges checks, one step after another, which members a weighted name
// answers with as its members and their health change. The server answers from groups the
// store prepares when it publishes a node, so every step would fail if a group kept a
// member, a weight or a value it had before, or settled a choice health should decide.
func TestAnswersFollowChanges(t *testing.T) {
	const name = "w.example.com"
	st := newStore(t)
	id := newZone(t, st, "example.com")
	upsert := func(c zones.Change, hc string) zones.Change {
		c.Action, c.Set.HealthCheckID = zones.Upsert, hc
		return c
	}
	del := func(c zones.Change) zones.Change {
		c.Action = zones.Delete
		return c
	}
	blue := weighted(name, "A", "blue", 1, "192.0.2.1")
	green := weighted(name, "A", "green", 3, "192.0.2.2")
	steps := []struct {
		name    string
		changes []zones.Change
		health  map[string]bool
		want    []string // every address that must answer, and nothing else
	}{
		{"weighted pair", []zones.Change{blue, green}, nil, []string{"192.0.2.1", "192.0.2.2"}},
		{"green weight 0", []zones.Change{upsert(weighted(name, "A", "green", 0, "192.0.2.2"), "")}, nil, []string{"192.0.2.1"}},
		{"green new value, blue weight 0", []zones.Change{upsert(weighted(name, "A", "green", 3, "192.0.2.3"), ""), upsert(weighted(name, "A", "blue", 0, "192.0.2.1"), "")}, nil, []string{"192.0.2.3"}},
		{"both weight 0", []zones.Change{upsert(weighted(name, "A", "green", 0, "192.0.2.3"), "")}, nil, []string{"192.0.2.1", "192.0.2.3"}},
		{"blue checked and unhealthy", []zones.Change{upsert(blue, "hc-blue"), upsert(weighted(name, "A", "green", 3, "192.0.2.3"), "")}, map[string]bool{"hc-blue": false}, []string{"192.0.2.3"}},
		{"blue healthy again", nil, map[string]bool{"hc-blue": true}, []string{"192.0.2.1", "192.0.2.3"}},
		{"green checked, both unhealthy: all count as healthy", []zones.Change{upsert(weighted(name, "A", "green", 3, "192.0.2.3"), "hc-green")}, map[string]bool{"hc-blue": false, "hc-green": false}, []string{"192.0.2.1", "192.0.2.3"}},
		{"green healthy", nil, map[string]bool{"hc-green": true}, []string{"192.0.2.3"}},
		{"green check removed, blue still unhealthy", []zones.Change{upsert(weighted(name, "A", "green", 3, "192.0.2.3"), "")}, nil, []string{"192.0.2.3"}},
		{"blue check removed", []zones.Change{upsert(blue, "")}, nil, []string{"192.0.2.1", "192.0.2.3"}},
		{"green deleted", []zones.Change{del(weighted(name, "A", "green", 3, "192.0.2.3"))}, nil, []string{"192.0.2.1"}},
		{"lone blue unhealthy still answers", []zones.Change{upsert(blue, "hc-blue")}, map[string]bool{"hc-blue": false}, []string{"192.0.2.1"}},
		{"weighted to simple", []zones.Change{del(upsert(blue, "hc-blue")), simple(name, "A", 60, "192.0.2.9")}, nil, []string{"192.0.2.9"}},
	}
	srv := New(st, nil)
	for _, step := range steps {
		if len(step.changes) > 0 {
			apply(t, st, id, step.changes...)
		}
		for hc, ok := range step.health {
			if err := st.SetHealth(hc, ok); err != nil {
				t.Fatal(err)
			}
		}
		// 200 queries: a member with a quarter of the weight is missed with probability
		// (3/4)^200 < 10⁻²⁴.
		seen := map[string]bool{}
		for range 200 {
			r := serveDirect(t, srv, query(name+".", dns.TypeA, 0), true)
			ips := answerIPs(r)
			if r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Answer) == 0 {
				t.Fatalf("%s: reply %v, want an authoritative answer", step.name, r)
			}
			for _, rr := range r.Answer {
				if rr.Header().Name != name+"." {
					t.Fatalf("%s: answer owned by %s, want %s.", step.name, rr.Header().Name, name)
				}
			}
			for _, ip := range ips {
				seen[ip] = true
			}
		}
		got := make([]string, 0, len(seen))
		for ip := range seen {
			got = append(got, ip)
		}
		sort.Strings(got)
		if !slices.Equal(got, step.want) {
			t.Errorf("%s: answered %v, want %v", step.name, got, step.want)
		}
	}
}

// TestWildcardAndMixedCaseOwners checks that an answer from a prepared group is owned by the
// name asked, not by the wildcard that holds it, and that a query in mixed case gets the
// records answered as the store holds them.
func TestWildcardAndMixedCaseOwners(t *testing.T) {
	st := newStore(t)
	id := newZone(t, st, "example.com")
	apply(t, st, id,
		weighted("*.w.example.com", "A", "blue", 1, "192.0.2.1"),
		weighted("*.w.example.com", "A", "green", 1, "192.0.2.2"),
		simple("*.s.example.com", "A", 60, "192.0.2.3"),
		simple("www.example.com", "A", 60, "192.0.2.4"),
	)
	srv := New(st, nil)
	for _, tc := range []struct{ qname, owner string }{
		{"x.w.example.com.", "x.w.example.com."},
		{"x.s.example.com.", "x.s.example.com."},
		{"*.s.example.com.", "*.s.example.com."},
		{"WWW.Example.com.", "www.example.com."},
	} {
		for range 20 {
			r := serveDirect(t, srv, query(tc.qname, dns.TypeA, 0), true)
			if len(r.Answer) != 1 || r.Answer[0].Header().Name != tc.owner {
				t.Fatalf("%s: answer %v, want one A owned by %s", tc.qname, r.Answer, tc.owner)
			}
		}
	}
}
