package dnsserver

import (
	"bytes"
	"log/slog"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestLoadBalancerNames: the server answers the DNS name of a load balancer the sandbox
// knows as Elastic Load Balancing's own name servers do (its addresses, TTL 60, "dualstack."
// alike, NODATA for a family it has none of), and an alias to it with the same addresses
// and the same TTL, as Route 53 answers an alias with its target's TTL. A load balancer
// name the sandbox does not know is refused, as any name outside its zones.
func TestLoadBalancerNames(t *testing.T) {
	st := newStore(t)
	zoneID := newZone(t, st, "example.com")
	const (
		lb      = "k8s-shop-web-0123456789-987654321.us-west-2.elb.amazonaws.com."
		lbZone  = "Z1H1FL5HABSF5" // ALB, us-west-2
		unknown = "k8s-other-0123456789-1.us-west-2.elb.amazonaws.com."
	)
	if _, err := st.SetLoadBalancer(lb, []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("192.0.2.11")}); err != nil {
		t.Fatal(err)
	}
	apply(t, st, zoneID, alias("www.example.com", "A", lbZone, "dualstack."+lb, false))
	udp, _ := serve(t, st)

	tests := []struct {
		qname  string
		qtype  uint16
		rcode  int
		answer []string
	}{
		{lb, dns.TypeA, dns.RcodeSuccess, []string{lb + " 60 IN A 192.0.2.10", lb + " 60 IN A 192.0.2.11"}},
		{"dualstack." + lb, dns.TypeA, dns.RcodeSuccess, []string{"dualstack." + lb + " 60 IN A 192.0.2.10", "dualstack." + lb + " 60 IN A 192.0.2.11"}},
		{lb, dns.TypeAAAA, dns.RcodeSuccess, nil},
		{"www.example.com.", dns.TypeA, dns.RcodeSuccess, []string{"www.example.com. 60 IN A 192.0.2.10", "www.example.com. 60 IN A 192.0.2.11"}},
		{unknown, dns.TypeA, dns.RcodeRefused, nil},
	}
	for _, tt := range tests {
		r := exchange(t, "udp", udp, query(tt.qname, tt.qtype, 0))
		var got []string
		for _, rr := range r.Answer {
			got = append(got, rr.String())
		}
		want := normalize(t, tt.answer)
		slices.Sort(got)
		if r.Rcode != tt.rcode || !slices.Equal(got, want) {
			t.Errorf("%s %s: %s %q, want %s %q", tt.qname, dns.TypeToString[tt.qtype], dns.RcodeToString[r.Rcode], got, dns.RcodeToString[tt.rcode], want)
		}
		if tt.rcode == dns.RcodeSuccess && !r.Authoritative {
			t.Errorf("%s %s: not authoritative", tt.qname, dns.TypeToString[tt.qtype])
		}
	}
}

// TestUnknownLoadBalancerLogged: an alias to a load balancer name the sandbox was never
// given answers NODATA, as it would if ELB had no addresses for it, and the server says
// why in one log line per name, naming the admin path that sets the addresses; an alias
// to a known load balancer logs nothing.
func TestUnknownLoadBalancerLogged(t *testing.T) {
	st := newStore(t)
	zoneID := newZone(t, st, "example.com")
	const (
		known   = "k8s-shop-web-0123456789-987654321.us-west-2.elb.amazonaws.com."
		unknown = "k8s-other-0123456789-1.us-west-2.elb.amazonaws.com."
		lbZone  = "Z1H1FL5HABSF5" // ALB, us-west-2
	)
	if _, err := st.SetLoadBalancer(known, []netip.Addr{netip.MustParseAddr("192.0.2.10")}); err != nil {
		t.Fatal(err)
	}
	apply(t, st, zoneID,
		alias("www.example.com", "A", lbZone, "dualstack."+known, false),
		alias("shop.example.com", "A", lbZone, unknown, false),
		alias("api.example.com", "A", lbZone, "dualstack."+unknown, false))

	tests := []struct {
		qname string
		rcode int
		logs  int // log lines in total after this query
	}{
		{"www.example.com.", dns.RcodeSuccess, 0},
		{"shop.example.com.", dns.RcodeSuccess, 1},
		{"shop.example.com.", dns.RcodeSuccess, 1}, // once per name, not per query
		{"api.example.com.", dns.RcodeSuccess, 1},  // the same load balancer, by its dualstack name
	}
	var buf bytes.Buffer
	s := New(st, slog.New(slog.NewTextHandler(&buf, nil)))
	for _, tt := range tests {
		r := serveDirect(t, s, query(tt.qname, dns.TypeA, 0), true)
		if r.Rcode != tt.rcode {
			t.Errorf("%s: %s, want %s", tt.qname, dns.RcodeToString[r.Rcode], dns.RcodeToString[tt.rcode])
		}
		lines := strings.Count(buf.String(), "\n")
		if lines != tt.logs {
			t.Errorf("after %s: %d log lines, want %d:\n%s", tt.qname, lines, tt.logs, buf.String())
		}
	}
	if !strings.Contains(buf.String(), "/_sandbox/loadbalancers/"+strings.TrimSuffix(unknown, ".")) || !strings.Contains(buf.String(), "NODATA") {
		t.Errorf("log does not name the load balancer's admin path: %s", buf.String())
	}
}
