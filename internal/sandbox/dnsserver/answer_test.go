package dnsserver

import (
	"testing"

	"github.com/miekg/dns"
)

// TestWithOwner checks that the copy carries the new owner and the same type and rdata,
// and that the record the store keeps still has its own owner.
func TestWithOwner(t *testing.T) {
	for _, text := range []string{
		"a.example. 60 IN A 192.0.2.1",
		"a.example. 60 IN AAAA 2001:db8::1",
		"a.example. 60 IN CNAME b.example.",
		`a.example. 60 IN TXT "v=1" "two"`,
		"a.example. 60 IN MX 10 mail.example.",
		"_x._tcp.a.example. 60 IN SRV 1 2 443 b.example.",
		"a.example. 60 IN NS ns1.example.",
		"1.2.0.192.in-addr.arpa. 60 IN PTR a.example.",
		`a.example. 60 IN CAA 0 issue "ca.example"`,
		"a.example. 60 IN SPF \"v=spf1 -all\"", // not a common type: deep-copied
	} {
		rr, err := dns.NewRR(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		owner := rr.Header().Name
		t.Run(dns.TypeToString[rr.Header().Rrtype], func(t *testing.T) {
			c := withOwner(rr, "w.example.")
			if c == rr {
				t.Fatal("withOwner returned the stored record itself, not a copy")
			}
			if got := rr.Header().Name; got != owner {
				t.Fatalf("stored record's owner became %q, want %q", got, owner)
			}
			if got := c.Header().Name; got != "w.example." {
				t.Fatalf("copy's owner = %q, want w.example.", got)
			}
			if c.Header().Rrtype != rr.Header().Rrtype || c.Header().Ttl != rr.Header().Ttl {
				t.Fatalf("copy's header = %v, want the type and TTL of %v", c.Header(), rr.Header())
			}
			back := dns.Copy(c)
			back.Header().Name = owner
			if !dns.IsDuplicate(rr, back) {
				t.Fatalf("copy %q has other rdata than %q", c, rr)
			}
		})
	}
}
