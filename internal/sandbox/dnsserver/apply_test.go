package dnsserver

import (
	"fmt"
	"slices"
	"testing"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// TestChangesVisibleAtOnce checks that a query sent right after Store.Apply (or SetHealth)
// returns sees the change: the server keeps no cache of its own.
func TestChangesVisibleAtOnce(t *testing.T) {
	st := newStore(t)
	zoneID := newZone(t, st, "example.com")
	udpAddr, tcpAddr := serve(t, st)
	const name = "fresh.example.com."
	ask := func(network, addr string) *dns.Msg {
		return exchange(t, network, addr, query(name, dns.TypeA, 0))
	}

	if r := ask("udp", udpAddr); r.Rcode != dns.RcodeNameError {
		t.Fatalf("before create: rcode %s, want NXDOMAIN", dns.RcodeToString[r.Rcode])
	}
	apply(t, st, zoneID, simple(name, "A", 60, "192.0.2.0"))
	for i := 1; i <= 50; i++ {
		ip := fmt.Sprintf("192.0.2.%d", i)
		apply(t, st, zoneID, zones.Change{Action: zones.Upsert, Set: zones.RRSet{Name: name, Type: "A", TTL: ptr(int64(60)), Records: []string{ip}}})
		network, addr := "udp", udpAddr
		if i%2 == 0 {
			network, addr = "tcp", tcpAddr
		}
		if got := answerIPs(ask(network, addr)); !slices.Equal(got, []string{ip}) {
			t.Fatalf("after upsert %d over %s: answer %v, want %s", i, network, got, ip)
		}
	}

	// A routing-policy change in one batch: simple to failover, then health flips.
	apply(t, st, zoneID,
		zones.Change{Action: zones.Delete, Set: zones.RRSet{Name: name, Type: "A", TTL: ptr(int64(60)), Records: []string{"192.0.2.50"}}},
		failover(name, zones.Primary, "hc-fresh", "198.51.100.1"),
		failover(name, zones.Secondary, "", "198.51.100.2"),
	)
	for i, healthy := range []bool{true, false, true, false} {
		if err := st.SetHealth("hc-fresh", healthy); err != nil {
			t.Fatal(err)
		}
		want := "198.51.100.2"
		if healthy {
			want = "198.51.100.1"
		}
		if got := answerIPs(ask("udp", udpAddr)); !slices.Equal(got, []string{want}) {
			t.Fatalf("health flip %d (healthy=%v): answer %v, want %s", i, healthy, got, want)
		}
	}

	apply(t, st, zoneID,
		zones.Change{Action: zones.Delete, Set: failover(name, zones.Primary, "hc-fresh", "198.51.100.1").Set},
		zones.Change{Action: zones.Delete, Set: failover(name, zones.Secondary, "", "198.51.100.2").Set},
	)
	if r := ask("udp", udpAddr); r.Rcode != dns.RcodeNameError {
		t.Fatalf("after delete: rcode %s, want NXDOMAIN", dns.RcodeToString[r.Rcode])
	}
}
