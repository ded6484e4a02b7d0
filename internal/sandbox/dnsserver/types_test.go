package dnsserver

import (
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestRecordTypesAnswered asks the running server over UDP and TCP for every record type
// Route 53 serves beyond the common ones, and for quoted values with ';' in them, as a
// resolver would: each answers authoritatively with exactly the stored data.
func TestRecordTypesAnswered(t *testing.T) {
	const (
		sha1   = "2BB183AF5F22588179A53B0A98631FAD1A292118"
		sha256 = "E06D44B80B8F1D39A95C0B0D7C65D08458E880409BBC683457104237C7F8EC8D"
	)
	st := newStore(t)
	zoneID := newZone(t, st, "example.com")
	apply(t, st, zoneID,
		simple("sub.example.com", "NS", 3600, "ns1.elsewhere.net."),
		simple("sub.example.com", "DS", 3600, "60485 5 1 "+sha1, "2371 13 2 "+sha256),
		simple("sip.example.com", "NAPTR", 300, `100 10 "S" "SIP+D2U" "" _sip._udp.example.com.`),
		simple("mail.example.com", "SPF", 300, `"v=spf1 ip4:192.0.2.0/24; -all"`),
		simple("mail.example.com", "TXT", 300, `"v=DKIM1; k=rsa; p=MIGf"`),
		simple("host.example.com", "SSHFP", 300, "4 2 "+sha256),
		simple("_443._tcp.www.example.com", "TLSA", 300, "3 1 1 "+sha256),
		simple("_dns.example.com", "SVCB", 300, "1 dns.example.com. alpn=dot port=853"),
		simple("www.example.com", "HTTPS", 300, "1 . alpn=h2,h3 ipv4hint=192.0.2.1"),
		simple("example.com", "CAA", 300, `0 issue "letsencrypt.org; validationmethods=dns-01"`, `128 issuewild ";"`),
	)
	udp, tcp := serve(t, st)
	for _, tc := range []struct {
		qname  string
		qtype  uint16
		answer []string
	}{
		// A DS at a zone cut belongs to the parent: answered, not referred.
		{"sub.example.com.", dns.TypeDS, []string{
			"sub.example.com. 3600 IN DS 60485 5 1 " + sha1,
			"sub.example.com. 3600 IN DS 2371 13 2 " + sha256}},
		{"sip.example.com.", dns.TypeNAPTR, []string{`sip.example.com. 300 IN NAPTR 100 10 "S" "SIP+D2U" "" _sip._udp.example.com.`}},
		{"mail.example.com.", dns.TypeSPF, []string{`mail.example.com. 300 IN SPF "v=spf1 ip4:192.0.2.0/24; -all"`}},
		{"mail.example.com.", dns.TypeTXT, []string{`mail.example.com. 300 IN TXT "v=DKIM1; k=rsa; p=MIGf"`}},
		{"host.example.com.", dns.TypeSSHFP, []string{"host.example.com. 300 IN SSHFP 4 2 " + sha256}},
		{"_443._tcp.www.example.com.", dns.TypeTLSA, []string{"_443._tcp.www.example.com. 300 IN TLSA 3 1 1 " + strings.ToLower(sha256)}},
		{"_dns.example.com.", dns.TypeSVCB, []string{"_dns.example.com. 300 IN SVCB 1 dns.example.com. alpn=dot port=853"}},
		{"www.example.com.", dns.TypeHTTPS, []string{"www.example.com. 300 IN HTTPS 1 . alpn=h2,h3 ipv4hint=192.0.2.1"}},
		{"example.com.", dns.TypeCAA, []string{
			`example.com. 300 IN CAA 0 issue "letsencrypt.org; validationmethods=dns-01"`,
			`example.com. 300 IN CAA 128 issuewild ";"`}},
	} {
		for _, network := range []string{"udp", "tcp"} {
			addr := udp
			if network == "tcp" {
				addr = tcp
			}
			name := network + " " + tc.qname + " " + dns.TypeToString[tc.qtype]
			r := exchange(t, network, addr, query(tc.qname, tc.qtype, 1232))
			if r.Rcode != dns.RcodeSuccess || !r.Authoritative {
				t.Errorf("%s: rcode %s, AA %v; want NOERROR, AA", name, dns.RcodeToString[r.Rcode], r.Authoritative)
				continue
			}
			if got, want := texts(r.Answer), normalize(t, tc.answer); !slices.Equal(got, want) {
				t.Errorf("%s: answer\n got %q\nwant %q", name, got, want)
			}
		}
	}
}
