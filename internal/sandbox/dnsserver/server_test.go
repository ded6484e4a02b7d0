package dnsserver

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// bigTXTCount records of ~110 bytes each: over 1232 bytes, under 4096.
const bigTXTCount = 30

// fixture is a store with two zones exercising every answer path, and a server for it.
type fixture struct {
	store            *zones.Store
	zoneID, other    string
	udpAddr, tcpAddr string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st := newStore(t)
	f := &fixture{store: st, zoneID: newZone(t, st, "example.com"), other: newZone(t, st, "other.test")}
	apply(t, st, f.other, simple("www.other.test", "A", 60, "198.51.100.1"))

	big := make([]string, bigTXTCount)
	for i := range big {
		big[i] = fmt.Sprintf(`"%02d-%s"`, i, strings.Repeat("x", 97))
	}
	weightedAlias := func(name, id string, w int64, target string) zones.Change {
		c := alias(name, "A", f.zoneID, target, true)
		c.Set.SetIdentifier, c.Set.Weight = id, ptr(w)
		return c
	}
	blue := simple("blue.example.com", "A", 300, "192.0.2.10")
	blue.Set.HealthCheckID = "hc-blue"
	apply(t, st, f.zoneID,
		simple("www.example.com", "A", 300, "192.0.2.1", "192.0.2.2"),
		simple("www.example.com", "AAAA", 300, "2001:db8::1"),
		simple("txt.example.com", "TXT", 120, `"hello world"`),
		simple("mx.example.com", "MX", 300, "10 mail.example.com."),
		simple("mail.example.com", "A", 300, "192.0.2.25"),
		simple("cname.example.com", "CNAME", 60, "www.example.com."),
		simple("cross.example.com", "CNAME", 60, "www.other.test."),
		simple("dangling.example.com", "CNAME", 60, "nothere.example.com."),
		simple("external.example.com", "CNAME", 60, "www.example.net."),
		simple("loop1.example.com", "CNAME", 60, "loop2.example.com."),
		simple("loop2.example.com", "CNAME", 60, "LOOP1.example.com."),
		alias("example.com", "A", f.zoneID, "www.example.com", false),
		alias("ao.example.com", "A", f.other, "www.other.test", false),
		blue,
		simple("green.example.com", "A", 300, "192.0.2.20"),
		weightedAlias("svc.example.com", "blue", 1, "blue.example.com"),
		weightedAlias("svc.example.com", "green", 1, "green.example.com"),
		alias("noeth.example.com", "A", f.zoneID, "blue.example.com", false),
		failover("fo.example.com", zones.Primary, "hc-1", "192.0.2.31"),
		failover("fo.example.com", zones.Secondary, "", "192.0.2.32"),
		failover("fo2.example.com", zones.Primary, "hc-2", "192.0.2.41"),
		failover("fo2.example.com", zones.Secondary, "", "192.0.2.42"),
		failover("fo3.example.com", zones.Primary, "hc-1", "192.0.2.51"),
		failover("fo3.example.com", zones.Secondary, "hc-3", "192.0.2.52"),
		simple("a.b.c.example.com", "A", 300, "192.0.2.60"),
		simple(`\052.wild.example.com`, "A", 300, "192.0.2.99"),
		simple("*.wc.example.com", "CNAME", 300, "www.example.com."),
		simple("bigtxt.example.com", "TXT", 300, big...),
		simple("sub.example.com", "NS", 3600, "ns1.sub.example.com.", "ns.elsewhere.net."),
		simple("ns1.sub.example.com", "A", 3600, "192.0.2.53"),
	)
	// An SOA whose MINIMUM is below its TTL, so that negative answers show the lower one.
	z, err := st.Zone(f.zoneID)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, st, f.zoneID, zones.Change{Action: zones.Upsert, Set: zones.RRSet{Name: "example.com", Type: "SOA", TTL: ptr(int64(3600)),
		Records: []string{z.NameServers[0] + " awsdns-hostmaster.amazon.com. 1 7200 900 1209600 300"}}})

	// An alias loop: the store checks only that a target exists when the alias is written.
	apply(t, st, f.zoneID,
		simple("loopb.example.com", "A", 300, "192.0.2.70"),
		alias("loopa.example.com", "A", f.zoneID, "loopb.example.com", true))
	apply(t, st, f.zoneID,
		zones.Change{Action: zones.Delete, Set: simple("loopb.example.com", "A", 300, "192.0.2.70").Set},
		alias("loopb.example.com", "A", f.zoneID, "loopa.example.com", false))
	for id, ok := range map[string]bool{"hc-blue": false, "hc-1": false, "hc-2": true, "hc-3": false} {
		if err := st.SetHealth(id, ok); err != nil {
			t.Fatalf("set health %s: %v", id, err)
		}
	}
	f.udpAddr, f.tcpAddr = serve(t, st)
	return f
}

func TestAnswers(t *testing.T) {
	f := newFixture(t)
	bigTXT := make([]string, bigTXTCount)
	for i := range bigTXT {
		bigTXT[i] = fmt.Sprintf(`bigtxt.example.com. 300 IN TXT "%02d-%s"`, i, strings.Repeat("x", 97))
	}
	wwwA := []string{"www.example.com. 300 IN A 192.0.2.1", "www.example.com. 300 IN A 192.0.2.2"}
	none := []string{}
	z, err := f.store.Zone(f.zoneID)
	if err != nil {
		t.Fatal(err)
	}
	apexSOA := []string{"example.com. 3600 IN SOA " + z.NameServers[0] + " awsdns-hostmaster.amazon.com. 1 7200 900 1209600 300"}
	var apexNS []string
	for _, ns := range z.NameServers {
		apexNS = append(apexNS, "example.com. 172800 IN NS "+ns)
	}

	tests := []struct {
		name    string
		net     string // "udp" unless set
		qname   string
		qtype   uint16
		qclass  uint16 // IN unless set
		bufsize uint16 // EDNS0 size; 0 sends no OPT
		repeat  int    // times to ask: for random choices that must never differ

		rcode   int
		noAA    bool     // AA must be clear (REFUSED, referral)
		answer  []string // nil: not compared (truncated answers)
		soa     bool     // zone SOA in authority, TTL min(SOA TTL 3600, MINIMUM 300) = 300
		ns      []string // authority records other than the SOA
		extra   []string // additional records other than OPT
		tc      bool
		maxSize int // UDP reply size limit to check; 0: none
	}{
		{name: "simple A", qname: "www.example.com.", qtype: dns.TypeA, answer: wwwA},
		{name: "AAAA", qname: "www.example.com.", qtype: dns.TypeAAAA, answer: []string{"www.example.com. 300 IN AAAA 2001:db8::1"}},
		{name: "TXT", qname: "txt.example.com.", qtype: dns.TypeTXT, answer: []string{`txt.example.com. 120 IN TXT "hello world"`}},
		{name: "MX", qname: "mx.example.com.", qtype: dns.TypeMX, answer: []string{"mx.example.com. 300 IN MX 10 mail.example.com."}},
		{name: "SOA at apex", qname: "example.com.", qtype: dns.TypeSOA, answer: apexSOA},
		{name: "NS at apex", qname: "example.com.", qtype: dns.TypeNS, answer: apexNS},
		{name: "CNAME chased in zone", qname: "cname.example.com.", qtype: dns.TypeA,
			answer: append([]string{"cname.example.com. 60 IN CNAME www.example.com."}, wwwA...)},
		{name: "CNAME asked for itself", qname: "cname.example.com.", qtype: dns.TypeCNAME,
			answer: []string{"cname.example.com. 60 IN CNAME www.example.com."}},
		{name: "CNAME chased across zones", qname: "cross.example.com.", qtype: dns.TypeA,
			answer: []string{"cross.example.com. 60 IN CNAME www.other.test.", "www.other.test. 60 IN A 198.51.100.1"}},
		{name: "CNAME to missing name is NXDOMAIN", qname: "dangling.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError,
			answer: []string{"dangling.example.com. 60 IN CNAME nothere.example.com."}, soa: true},
		{name: "CNAME out of sandbox", qname: "external.example.com.", qtype: dns.TypeA,
			answer: []string{"external.example.com. 60 IN CNAME www.example.net."}},
		{name: "CNAME loop stops", qname: "loop1.example.com.", qtype: dns.TypeA,
			answer: []string{"loop1.example.com. 60 IN CNAME loop2.example.com.", "loop2.example.com. 60 IN CNAME LOOP1.example.com."}},
		{name: "alias at apex", qname: "example.com.", qtype: dns.TypeA,
			answer: []string{"example.com. 300 IN A 192.0.2.1", "example.com. 300 IN A 192.0.2.2"}},
		{name: "alias to other zone takes target TTL", qname: "ao.example.com.", qtype: dns.TypeA,
			answer: []string{"ao.example.com. 60 IN A 198.51.100.1"}},
		{name: "alias of other type is NODATA", qname: "ao.example.com.", qtype: dns.TypeAAAA, answer: none, soa: true},
		{name: "weighted alias skips unhealthy target", qname: "svc.example.com.", qtype: dns.TypeA, repeat: 40,
			answer: []string{"svc.example.com. 300 IN A 192.0.2.20"}},
		{name: "alias without target health ignores it", qname: "noeth.example.com.", qtype: dns.TypeA,
			answer: []string{"noeth.example.com. 300 IN A 192.0.2.10"}},
		{name: "alias loop is NODATA", qname: "loopa.example.com.", qtype: dns.TypeA, answer: none, soa: true},
		{name: "failover primary unhealthy", qname: "fo.example.com.", qtype: dns.TypeA, repeat: 10,
			answer: []string{"fo.example.com. 30 IN A 192.0.2.32"}},
		{name: "failover primary healthy", qname: "fo2.example.com.", qtype: dns.TypeA, repeat: 10,
			answer: []string{"fo2.example.com. 30 IN A 192.0.2.41"}},
		{name: "failover all unhealthy answers primary", qname: "fo3.example.com.", qtype: dns.TypeA, repeat: 10,
			answer: []string{"fo3.example.com. 30 IN A 192.0.2.51"}},
		{name: "NXDOMAIN", qname: "nope.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, answer: none, soa: true},
		{name: "NXDOMAIN below existing name", qname: "x.www.example.com.", qtype: dns.TypeA, rcode: dns.RcodeNameError, answer: none, soa: true},
		{name: "NODATA", qname: "www.example.com.", qtype: dns.TypeTXT, answer: none, soa: true},
		{name: "NODATA for unknown type", qname: "www.example.com.", qtype: 65400, answer: none, soa: true},
		{name: "empty non-terminal is NODATA", qname: "c.example.com.", qtype: dns.TypeA, answer: none, soa: true},
		{name: "deeper empty non-terminal is NODATA", qname: "b.c.example.com.", qtype: dns.TypeA, answer: none, soa: true},
		{name: "wildcard", qname: "foo.wild.example.com.", qtype: dns.TypeA,
			answer: []string{"foo.wild.example.com. 300 IN A 192.0.2.99"}},
		{name: "wildcard two labels down", qname: "x.y.wild.example.com.", qtype: dns.TypeA,
			answer: []string{"x.y.wild.example.com. 300 IN A 192.0.2.99"}},
		{name: "wildcard NODATA", qname: "foo.wild.example.com.", qtype: dns.TypeAAAA, answer: none, soa: true},
		{name: "wildcard CNAME", qname: "foo.wc.example.com.", qtype: dns.TypeA,
			answer: append([]string{"foo.wc.example.com. 300 IN CNAME www.example.com."}, wwwA...)},
		{name: "outside every zone is REFUSED", qname: "www.example.org.", qtype: dns.TypeA, rcode: dns.RcodeRefused, noAA: true, answer: none},
		{name: "parent of a zone is REFUSED", qname: "com.", qtype: dns.TypeNS, rcode: dns.RcodeRefused, noAA: true, answer: none},
		{name: "case-insensitive", qname: "WwW.ExAmPlE.CoM.", qtype: dns.TypeA, answer: wwwA},
		{name: "case-insensitive over TCP", net: "tcp", qname: "CNAME.EXAMPLE.COM.", qtype: dns.TypeA,
			answer: append([]string{"cname.example.com. 60 IN CNAME www.example.com."}, wwwA...)},
		{name: "class CH is REFUSED", qname: "www.example.com.", qtype: dns.TypeA, qclass: dns.ClassCHAOS,
			rcode: dns.RcodeRefused, noAA: true, answer: none},
		{name: "AXFR is REFUSED", net: "tcp", qname: "example.com.", qtype: dns.TypeAXFR, rcode: dns.RcodeRefused, noAA: true, answer: none},
		{name: "ANY", qname: "www.example.com.", qtype: dns.TypeANY,
			answer: append([]string{"www.example.com. 300 IN AAAA 2001:db8::1"}, wwwA...)},
		{name: "referral below delegation", qname: "host.sub.example.com.", qtype: dns.TypeA, noAA: true, answer: none,
			ns:    []string{"sub.example.com. 3600 IN NS ns1.sub.example.com.", "sub.example.com. 3600 IN NS ns.elsewhere.net."},
			extra: []string{"ns1.sub.example.com. 3600 IN A 192.0.2.53"}},
		{name: "referral at delegation", qname: "sub.example.com.", qtype: dns.TypeNS, noAA: true, answer: none,
			ns:    []string{"sub.example.com. 3600 IN NS ns1.sub.example.com.", "sub.example.com. 3600 IN NS ns.elsewhere.net."},
			extra: []string{"ns1.sub.example.com. 3600 IN A 192.0.2.53"}},
		{name: "UDP without EDNS0 truncates at 512", qname: "bigtxt.example.com.", qtype: dns.TypeTXT, tc: true, maxSize: 512},
		{name: "UDP EDNS0 1232 truncates", qname: "bigtxt.example.com.", qtype: dns.TypeTXT, bufsize: 1232, tc: true, maxSize: 1232},
		{name: "UDP EDNS0 below 512 counts as 512", qname: "bigtxt.example.com.", qtype: dns.TypeTXT, bufsize: 100, tc: true, maxSize: 512},
		{name: "UDP EDNS0 4096 is honoured", qname: "bigtxt.example.com.", qtype: dns.TypeTXT, bufsize: 4096, answer: bigTXT},
		{name: "TCP has no 512 limit", net: "tcp", qname: "bigtxt.example.com.", qtype: dns.TypeTXT, answer: bigTXT},
		{name: "SOA at apex after negative answers (store not mutated)", qname: "example.com.", qtype: dns.TypeSOA, answer: apexSOA},
		{name: "EDNS0 small answer", qname: "www.example.com.", qtype: dns.TypeA, bufsize: 4096, answer: wwwA},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			network, addr := "udp", f.udpAddr
			if tc.net == "tcp" {
				network, addr = "tcp", f.tcpAddr
			}
			for range max(tc.repeat, 1) {
				q := query(tc.qname, tc.qtype, tc.bufsize)
				if tc.qclass != 0 {
					q.Question[0].Qclass = tc.qclass
				}
				r := exchange(t, network, addr, q)
				checkReply(t, q, r, tc.rcode, !tc.noAA, tc.tc)
				if tc.answer != nil {
					if got, want := texts(r.Answer), normalize(t, tc.answer); !slices.Equal(got, want) {
						t.Fatalf("answer:\n got %q\nwant %q", got, want)
					}
				}
				checkAuthority(t, r, tc.soa, tc.ns)
				if tc.extra != nil {
					if got, want := texts(r.Extra), normalize(t, tc.extra); !slices.Equal(got, want) {
						t.Errorf("additional:\n got %q\nwant %q", got, want)
					}
				}
				if tc.tc && (len(r.Answer) >= bigTXTCount) {
					t.Errorf("truncated reply carries all %d records", len(r.Answer))
				}
				if tc.maxSize > 0 {
					r.Compress = true // the server compresses what would not fit otherwise
					if n := r.Len(); n > tc.maxSize {
						t.Errorf("reply is %d bytes, limit %d", n, tc.maxSize)
					}
				}
				checkOPT(t, q, r)
			}
		})
	}
}

// checkReply checks the header and question of every reply.
func checkReply(t *testing.T, q, r *dns.Msg, rcode int, aa, tc bool) {
	t.Helper()
	if r.Rcode != rcode {
		t.Fatalf("rcode %s, want %s", dns.RcodeToString[r.Rcode], dns.RcodeToString[rcode])
	}
	if !r.Response || r.Opcode != dns.OpcodeQuery {
		t.Errorf("reply QR=%v opcode=%d", r.Response, r.Opcode)
	}
	if r.Authoritative != aa {
		t.Errorf("AA=%v, want %v", r.Authoritative, aa)
	}
	if r.Truncated != tc {
		t.Errorf("TC=%v, want %v", r.Truncated, tc)
	}
	if r.RecursionAvailable {
		t.Errorf("RA set by an authoritative server")
	}
	if len(r.Question) != 1 || r.Question[0] != q.Question[0] {
		t.Errorf("question %v, want it echoed as asked: %v", r.Question, q.Question)
	}
}

// checkAuthority checks the authority section: example.com's SOA for negative answers,
// with TTL min(3600, 300), and any other expected records.
func checkAuthority(t testing.TB, r *dns.Msg, soa bool, want []string) {
	t.Helper()
	var soas []*dns.SOA
	var other []dns.RR
	for _, rr := range r.Ns {
		if s, ok := rr.(*dns.SOA); ok {
			soas = append(soas, s)
		} else {
			other = append(other, rr)
		}
	}
	switch {
	case soa && len(soas) != 1:
		t.Errorf("authority has %d SOA records, want 1: %v", len(soas), r.Ns)
	case soa:
		if s := soas[0]; s.Hdr.Name != "example.com." || s.Hdr.Ttl != 300 || s.Minttl != 300 {
			t.Errorf("authority SOA %v, want example.com.'s with TTL min(3600, 300)", s)
		}
	case len(soas) > 0:
		t.Errorf("unexpected SOA in authority: %v", soas)
	}
	if got, want := texts(other), normalize(t, want); !slices.Equal(got, want) {
		t.Errorf("authority:\n got %q\nwant %q", got, want)
	}
}

// checkOPT checks that a query with OPT gets OPT back advertising 1232 bytes without DO,
// and a query without OPT gets none.
func checkOPT(t *testing.T, q, r *dns.Msg) {
	t.Helper()
	opt := r.IsEdns0()
	switch {
	case q.IsEdns0() == nil && opt != nil:
		t.Errorf("OPT in reply to a query without one")
	case q.IsEdns0() != nil && opt == nil:
		t.Errorf("no OPT in reply to an EDNS0 query")
	case opt != nil && (opt.UDPSize() != 1232 || opt.Do() || opt.Version() != 0):
		t.Errorf("reply OPT: size %d DO %v version %d, want 1232 false 0", opt.UDPSize(), opt.Do(), opt.Version())
	}
}
