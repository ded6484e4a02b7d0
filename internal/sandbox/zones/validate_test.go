package zones

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// TestRecordValues checks values per type as Route 53 takes them: every type it accepts,
// a ';' that is data inside quotes, and a malformed value refused with a message that
// names it.
func TestRecordValues(t *testing.T) {
	const (
		sha1   = "2bb183af5f22588179a53b0a98631fad1a292118"
		sha256 = "e06d44b80b8f1d39a95c0b0d7c65d08458e880409bbc683457104237c7f8ec8d"
	)
	tests := []struct {
		typ, value string
		want       string // the stored record's data as the DNS server answers it; "" if refused
		problem    string // for a refused value, a substring of the message
	}{
		{"TXT", `"v=1; p=x"`, `"v=1; p=x"`, ""},
		{"TXT", `"a\"; b" "c;d"`, `"a\"; b" "c;d"`, ""},
		{"TXT", `v=1; p=x`, "", "InvalidRDATA (Value is not valid TXT data: ';' outside quotation marks)"},
		{"TXT", `"v=1"; p=x`, "", "';' outside quotation marks"},
		{"SPF", `"v=spf1 include:_spf.example.com; -all"`, `"v=spf1 include:_spf.example.com; -all"`, ""},
		{"CAA", `0 issue "letsencrypt.org; validationmethods=dns-01"`, `0 issue "letsencrypt.org; validationmethods=dns-01"`, ""},
		{"CAA", `128 issuewild ";"`, `128 issuewild ";"`, ""},
		{"CAA", `0 issue letsencrypt.org; validationmethods=dns-01`, "", "InvalidRDATA (Value is not valid CAA data: ';' outside quotation marks)"},
		{"DS", "60485 5 1 " + sha1, "60485 5 1 " + strings.ToUpper(sha1), ""},
		{"DS", "2371 13 2 " + sha256, "2371 13 2 " + strings.ToUpper(sha256), ""},
		{"DS", "2371 13 2 abcd", "", "InvalidRDATA (Value is not valid DS data: digest must be 64 hexadecimal digits for digest type 2)"},
		{"DS", "2371 13 2 " + strings.Repeat("zz", 32), "", "digest is not hexadecimal"},
		{"DS", "2371 13", "", "InvalidRDATA (Value is not valid DS data)"},
		{"NAPTR", `100 10 "S" "SIP+D2U" "" _sip._udp.example.com.`, `100 10 "S" "SIP+D2U" "" _sip._udp.example.com.`, ""},
		{"NAPTR", `100 10 "U" "E2U+sip" "!^.*$!sip:info@example.com!" .`, `100 10 "U" "E2U+sip" "!^.*$!sip:info@example.com!" .`, ""},
		{"NAPTR", `100 10 S SIP+D2U "" _sip._udp.example.com.`, "", "InvalidRDATA (Value is not valid NAPTR data)"},
		{"SSHFP", "4 2 " + sha256, "4 2 " + strings.ToUpper(sha256), ""},
		{"SSHFP", "1 1 zz", "", "InvalidRDATA (Value is not valid SSHFP data: fingerprint is not hexadecimal)"},
		{"SSHFP", "1 2 " + sha1, "", "fingerprint must be 64 hexadecimal digits for fingerprint type 2"},
		{"TLSA", "3 1 1 " + sha256, "3 1 1 " + sha256, ""},
		{"TLSA", "3 1 1 2daf5c9dd5b336961d9d76b924", "", "InvalidRDATA (Value is not valid TLSA data: certificate association data must be 64 hexadecimal digits for matching type 1)"},
		{"TLSA", "3 1 0 not-hex", "", "certificate association data is not hexadecimal"},
		{"SVCB", "1 svc.example.com. alpn=h2,h3 port=8443", `1 svc.example.com. alpn="h2,h3" port="8443"`, ""},
		{"SVCB", "0 svc.example.com.", "0 svc.example.com.", ""},
		{"SVCB", "0 svc.example.com. alpn=h2", "", "InvalidRDATA (Value is not valid SVCB data: AliasMode (SvcPriority 0) takes no SvcParams)"},
		{"HTTPS", "1 . alpn=h2,h3 ipv4hint=192.0.2.1", `1 . alpn="h2,h3" ipv4hint="192.0.2.1"`, ""},
		{"HTTPS", "1 . bogus=1", "", "InvalidRDATA (Value is not valid HTTPS data)"},
	}
	for _, tt := range tests {
		t.Run(tt.typ+" "+tt.value, func(t *testing.T) {
			s, err := Open(Options{})
			if err != nil {
				t.Fatal(err)
			}
			zone := newZone(t, s, "example.com")
			_, err = s.Apply(zone.ID, "", []Change{{Create, simple("r.example.com.", tt.typ, 60, tt.value)}})
			if tt.want == "" {
				var ze *Error
				wantMsg := "[Invalid Resource Record: 'FATAL problem: "
				if !errors.As(err, &ze) || ze.Code != CodeInvalidChangeBatch || !strings.HasPrefix(ze.Message, wantMsg) ||
					!strings.Contains(ze.Message, tt.problem) || !strings.HasSuffix(ze.Message, " encountered with '"+tt.value+"'']") {
					t.Fatalf("Apply error = %v\nwant InvalidChangeBatch %q… naming %q and the value", err, wantMsg, tt.problem)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			a, _ := s.Lookup("r.example.com.")
			if a.Node == nil || len(a.Node.Sets) != 1 || len(a.Node.Sets[0].DNSRecords()) != 1 {
				t.Fatalf("stored node %+v", a.Node)
			}
			rr := a.Node.Sets[0].DNSRecords()[0]
			if got := strings.TrimPrefix(rr.String(), rr.Header().String()); got != tt.want {
				t.Fatalf("stored data %s, want %s", got, tt.want)
			}
		})
	}
}

func TestRecordTypeEnum(t *testing.T) {
	s, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	zone := newZone(t, s, "example.com")
	_, err = s.Apply(zone.ID, "", []Change{{Create, simple("r.example.com.", "LOC", 60, "52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m")}})
	want := "1 validation error detected: Value 'LOC' at 'changeBatch.changes.1.member.resourceRecordSet.type' failed to satisfy constraint: Member must satisfy enum value set: [SOA, A, TXT, NS, CNAME, MX, NAPTR, PTR, SRV, SPF, AAAA, CAA, DS, TLSA, SSHFP, SVCB, HTTPS]"
	var ze *Error
	if !errors.As(err, &ze) || ze.Code != CodeInvalidInput || ze.Message != want {
		t.Fatalf("Apply LOC: %v\nwant InvalidInput: %s", err, want)
	}
}

func TestBareSemicolon(t *testing.T) {
	for v, want := range map[string]bool{
		`"a;b"`:       false,
		`a;b`:         true,
		`"a" ;`:       true,
		`a\;b`:        false,
		`"a\";b"`:     false,
		`"a\\";b`:     true,
		`0 issue ";"`: false,
		``:            false,
	} {
		if got := bareSemicolon(v); got != want {
			t.Errorf("bareSemicolon(%s) = %v, want %v", v, got, want)
		}
	}
}

func TestLoadBalancerTable(t *testing.T) {
	s, err := Open(Options{})
	if err != nil {
		t.Fatal(err)
	}
	const name, zone = "k8s-default-web-0123456789-1234567890.us-west-2.elb.amazonaws.com", "Z1H1FL5HABSF5"
	if n := s.LookupIn(zone, name+"."); n != nil {
		t.Fatalf("unknown load balancer answers %v", n.Sets)
	}
	lb, err := s.SetLoadBalancer("DualStack."+name, []netip.Addr{netip.MustParseAddr("192.0.2.10"), netip.MustParseAddr("2001:db8::10")})
	if err != nil || lb.ZoneID != zone || lb.DNSName != name+"." {
		t.Fatalf("SetLoadBalancer = %+v, %v", lb, err)
	}
	for _, q := range []string{name + ".", "dualstack." + name + "."} {
		n := s.LookupIn(zone, q)
		if n == nil || len(n.Sets) != 2 || n.Sets[0].Type != "A" || n.Sets[1].Type != "AAAA" || *n.Sets[0].TTL != LoadBalancerTTL {
			t.Fatalf("LookupIn(%s, %s) = %+v", zone, q, n)
		}
	}
	if n := s.LookupIn("Z35SXDOTRQ7X7K", "unknown-1.us-east-1.elb.amazonaws.com."); n != nil {
		t.Fatalf("another load balancer answers %v", n.Sets)
	}
	if !s.DeleteLoadBalancer(name) || s.LookupIn(zone, name+".") != nil {
		t.Fatal("load balancer still answers after DeleteLoadBalancer")
	}
	if _, err := s.SetLoadBalancer("www.example.com", nil); err == nil || !strings.Contains(err.Error(), "www.example.com") {
		t.Fatalf("SetLoadBalancer of a non-ELB name: %v", err)
	}
}
