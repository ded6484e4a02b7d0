package dnsserver

import (
	"bytes"
	"encoding/binary"
	"net"
	"reflect"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// packed packs m or fails the test.
func packed(t testing.TB, m *dns.Msg) []byte {
	t.Helper()
	b, err := m.Pack()
	if err != nil {
		t.Fatalf("pack %v: %v", m.Question, err)
	}
	return b
}

// rawQuery is a query for name, given as wire labels, with extra bytes appended after the
// question and the header counts given.
func rawQuery(labels []string, qd, an, ns, ar uint16, tail ...byte) []byte {
	b := []byte{0x12, 0x34, 0x01, 0x00}
	for _, c := range []uint16{qd, an, ns, ar} {
		b = binary.BigEndian.AppendUint16(b, c)
	}
	for _, l := range labels {
		b = append(append(b, byte(len(l))), l...)
	}
	b = append(b, 0, 0, 1, 0, 1) // root, type A, class IN
	return append(b, tail...)
}

func TestParseQueryMatchesUnpack(t *testing.T) {
	withOPT := func(m *dns.Msg, size uint16, do bool, version uint8) *dns.Msg {
		m.SetEdns0(size, do)
		m.IsEdns0().SetVersion(version)
		return m
	}
	withCookie := query("www.example.com.", dns.TypeA, 1232)
	withCookie.IsEdns0().Option = append(withCookie.IsEdns0().Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0123456789abcdef"})
	flags := query("www.example.com.", dns.TypeA, 0)
	flags.RecursionDesired, flags.CheckingDisabled, flags.AuthenticatedData, flags.Zero = true, true, true, true
	flags.Opcode, flags.Rcode = dns.OpcodeNotify, dns.RcodeRefused
	badvers := withOPT(query("www.example.com.", dns.TypeA, 0), 4096, true, 1)
	badvers.Rcode = dns.RcodeBadVers // the extended rcode rides in the OPT record
	twoQuestions := query("www.example.com.", dns.TypeA, 0)
	twoQuestions.Question = append(twoQuestions.Question, twoQuestions.Question[0])
	withAnswer := query("www.example.com.", dns.TypeA, 0)
	withAnswer.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "www.example.com.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(192, 0, 2, 1)}}
	twoOPT := query("www.example.com.", dns.TypeA, 512)
	twoOPT.Extra = append(twoOPT.Extra, &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: 1232}})
	long := strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("b", 61) + "."    // 254 octets on the wire: the most Unpack takes
	tooLong := strings.Repeat(strings.Repeat("a", 63)+".", 3) + strings.Repeat("b", 62) + "." // 255
	compressed := packed(t, query("www.example.com.", dns.TypeA, 0))
	compressed = append(compressed[:12], 0xC0, 12, 0, 1, 0, 1) // a pointer at itself

	tests := []struct {
		name   string
		pkt    []byte
		accept bool
	}{
		{"plain A", packed(t, query("host1.bench.test.", dns.TypeA, 0)), true},
		{"mixed case AAAA", packed(t, query("WWW.Example.COM.", dns.TypeAAAA, 0)), true},
		{"root SOA", packed(t, query(".", dns.TypeSOA, 0)), true},
		{"wildcard and underscore", packed(t, query("*._dmarc.x-y.example.com.", dns.TypeTXT, 0)), true},
		{"class CH", func() []byte {
			m := query("version.bind.", dns.TypeTXT, 0)
			m.Question[0].Qclass = dns.ClassCHAOS
			return packed(t, m)
		}(), true},
		{"header flags and opcode", packed(t, flags), true},
		{"EDNS 1232", packed(t, query("www.example.com.", dns.TypeA, 1232)), true},
		{"EDNS DO bit, small size", packed(t, withOPT(query("www.example.com.", dns.TypeMX, 0), 100, true, 0)), true},
		{"EDNS version 1 and extended rcode", packed(t, badvers), true},
		{"longest name", packed(t, query(long, dns.TypeA, 0)), true},
		{"no question", rawQuery(nil, 0, 0, 0, 0)[:12], false},
		{"EDNS option", packed(t, withCookie), false},
		{"two questions", packed(t, twoQuestions), false},
		{"answer section", packed(t, withAnswer), false},
		{"two OPT", packed(t, twoOPT), false},
		{"name too long", rawQuery(dns.SplitDomainName(tooLong), 1, 0, 0, 0), false},
		{"compression pointer", compressed, false},
		{"escaped dot", rawQuery([]string{"a.b", "example", "com"}, 1, 0, 0, 0), false},
		{"escaped byte", rawQuery([]string{"a\x00b", "com"}, 1, 0, 0, 0), false},
		{"space", rawQuery([]string{"a b", "com"}, 1, 0, 0, 0), false},
		{"semicolon", rawQuery([]string{"a;b", "com"}, 1, 0, 0, 0), false},
		{"trailing byte", rawQuery([]string{"com"}, 1, 0, 0, 0, 0xff), false},
		{"truncated question", rawQuery([]string{"com"}, 1, 0, 0, 0)[:17], false},
		{"counted OPT missing", rawQuery([]string{"com"}, 1, 0, 0, 1), false},
		{"OPT not at root", rawQuery([]string{"com"}, 1, 0, 0, 1, 1, 'a', 0, 0, 41, 4, 0xd0, 0, 0, 0, 0, 0, 0), false},
		{"A record as additional", rawQuery([]string{"com"}, 1, 0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 4, 1, 2, 3, 4), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got dns.Msg
			var opt dns.OPT
			accepted := parseQuery(&got, &opt, tt.pkt)
			if accepted != tt.accept {
				t.Fatalf("parseQuery accepted %v, want %v", accepted, tt.accept)
			}
			if !accepted {
				return
			}
			var want dns.Msg
			if err := want.Unpack(tt.pkt); err != nil {
				t.Fatalf("parseQuery accepted a packet Unpack rejects: %v", err)
			}
			if !reflect.DeepEqual(&got, &want) {
				t.Fatalf("parseQuery read\n%v\nUnpack read\n%v", &got, &want)
			}
		})
	}
}

// FuzzParseQuery checks that whatever parseQuery accepts, miekg/dns unpacks to the same message.
func FuzzParseQuery(f *testing.F) {
	f.Add(packed(f, query("host1.bench.test.", dns.TypeA, 0)))
	f.Add(packed(f, query("WWW.example.com.", dns.TypeAAAA, 1232)))
	f.Add(packed(f, query(".", dns.TypeNS, 4096)))
	f.Fuzz(func(t *testing.T, pkt []byte) {
		var got dns.Msg
		var opt dns.OPT
		if !parseQuery(&got, &opt, pkt) {
			return
		}
		var want dns.Msg
		if err := want.Unpack(pkt); err != nil {
			t.Fatalf("parseQuery accepted a packet Unpack rejects: %v", err)
		}
		if !reflect.DeepEqual(&got, &want) {
			t.Fatalf("parseQuery read\n%v\nUnpack read\n%v", &got, &want)
		}
	})
}

func TestPackReplyMatchesPackBuffer(t *testing.T) {
	hdr := func(name string, typ uint16, ttl uint32) dns.RR_Header {
		return dns.RR_Header{Name: name, Rrtype: typ, Class: dns.ClassINET, Ttl: ttl}
	}
	a := func(name, ip string) dns.RR { return &dns.A{Hdr: hdr(name, dns.TypeA, 60), A: net.ParseIP(ip)} }
	aaaa := func(name, ip string) dns.RR {
		return &dns.AAAA{Hdr: hdr(name, dns.TypeAAAA, 300), AAAA: net.ParseIP(ip)}
	}
	opt := func(size uint16) dns.RR {
		return &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: size}}
	}
	reply := func(qname string, qtype uint16, rcode int, answer []dns.RR, extra ...dns.RR) *dns.Msg {
		m := &dns.Msg{MsgHdr: dns.MsgHdr{Id: 0xbeef, Response: true, Authoritative: true, RecursionDesired: true, Rcode: rcode}}
		m.Question = []dns.Question{{Name: qname, Qtype: qtype, Qclass: dns.ClassINET}}
		m.Answer, m.Extra = answer, extra
		return m
	}
	many := make([]dns.RR, 100)
	for i := range many {
		many[i] = a("big.example.com.", "192.0.2.1")
	}
	soa, err := dns.NewRR("example.com. 900 IN SOA ns-1.example.com. hostmaster.example.com. 1 7200 900 1209600 86400")
	if err != nil {
		t.Fatal(err)
	}
	cname, err := dns.NewRR("www.example.com. 300 IN CNAME web.example.com.")
	if err != nil {
		t.Fatal(err)
	}
	extOPT := opt(1232).(*dns.OPT)
	extOPT.Option = []dns.EDNS0{&dns.EDNS0_NSID{Code: dns.EDNS0NSID, Nsid: "00"}}
	noQuestion := &dns.Msg{MsgHdr: dns.MsgHdr{Id: 7, Response: true, Opcode: dns.OpcodeUpdate, Rcode: dns.RcodeNotImplemented}}

	tests := []struct {
		name   string
		m      *dns.Msg
		limit  int
		accept bool
	}{
		{"one A", reply("host1.bench.test.", dns.TypeA, 0, []dns.RR{a("host1.bench.test.", "10.0.0.1")}), 512, true},
		{"A pair and OPT", reply("w.example.com.", dns.TypeA, 0, []dns.RR{a("w.example.com.", "192.0.2.1"), a("w.example.com.", "192.0.2.2")}, opt(1232)), 1232, true},
		{"AAAA", reply("v6.example.com.", dns.TypeAAAA, 0, []dns.RR{aaaa("v6.example.com.", "2001:db8::1")}), 512, true},
		{"owner differs from the question's case", reply("WWW.example.com.", dns.TypeA, 0, []dns.RR{a("www.example.com.", "192.0.2.1")}), 512, true},
		{"NXDOMAIN without authority", reply("nope.example.com.", dns.TypeA, dns.RcodeNameError, nil, opt(512)), 512, true},
		{"REFUSED", reply("nope.example.org.", dns.TypeA, dns.RcodeRefused, nil), 512, true},
		{"no question", noQuestion, 512, true},
		{"root question", reply(".", dns.TypeNS, dns.RcodeRefused, nil), 512, true},
		{"fills the limit exactly", reply("big.example.com.", dns.TypeA, 0, many[:16]), 12 + 21 + 16*31, true},
		{"over the limit", reply("big.example.com.", dns.TypeA, 0, many[:17]), 12 + 21 + 16*31, false},
		{"over the buffer", reply("big.example.com.", dns.TypeA, 0, many), 65535, false},
		{"CNAME", reply("www.example.com.", dns.TypeA, 0, []dns.RR{cname}), 512, false},
		{"authority SOA", func() *dns.Msg { m := reply("x.example.com.", dns.TypeA, 0, nil); m.Ns = []dns.RR{soa}; return m }(), 512, false},
		{"BADVERS", reply("www.example.com.", dns.TypeA, dns.RcodeBadVers, nil, opt(1232)), 512, false},
		{"OPT with an option", reply("www.example.com.", dns.TypeA, 0, nil, extOPT), 512, false},
		{"escaped owner", reply("www.example.com.", dns.TypeA, 0, []dns.RR{a(`a\.b.example.com.`, "192.0.2.1")}), 512, false},
		{"IPv6 in an A record", reply("www.example.com.", dns.TypeA, 0, []dns.RR{a("www.example.com.", "2001:db8::1")}), 512, false},
		{"compressed", func() *dns.Msg {
			m := reply("w.example.com.", dns.TypeA, 0, []dns.RR{a("w.example.com.", "192.0.2.1")})
			m.Compress = true
			return m
		}(), 512, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			buf := make([]byte, 1024)
			got, accepted := packReply(tt.m, buf, tt.limit)
			if accepted != tt.accept {
				t.Fatalf("packReply accepted %v, want %v", accepted, tt.accept)
			}
			if !accepted {
				return
			}
			want, err := tt.m.PackBuffer(make([]byte, 1024))
			if err != nil {
				t.Fatalf("packReply packed a message PackBuffer rejects: %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("packReply wrote\n%x\nPackBuffer wrote\n%x", got, want)
			}
			if len(got) > tt.limit {
				t.Fatalf("reply of %d bytes over the limit %d", len(got), tt.limit)
			}
		})
	}
}

// slowAnswer answers pkt the way the UDP listener did before its shortcuts: miekg/dns
// unpacks the query and packs the reply.
func slowAnswer(t *testing.T, s *Server, pkt []byte) []byte {
	t.Helper()
	if len(pkt) < headerSize || pkt[2]&0x80 != 0 {
		return nil // a runt or a response: no reply, before any parsing
	}
	rp := newReply()
	req := new(dns.Msg)
	if err := req.Unpack(pkt); err != nil {
		return s.answerPacket(rp, req, pkt) // FORMERR, built by the listener's own path
	}
	limit := s.respond(rp, req, true)
	return s.pack(rp, req, limit)
}

// FuzzAnswerPacketMatchesSlowPath checks that the listener's shortcuts change no reply: over
// a store whose every answer is deterministic, answerPacket writes exactly the bytes that
// unpacking and packing with miekg/dns give.
func FuzzAnswerPacketMatchesSlowPath(f *testing.F) {
	for _, q := range []*dns.Msg{
		query("www.example.com.", dns.TypeA, 0),
		query("WWW.example.COM.", dns.TypeA, 1232),
		query("w.example.com.", dns.TypeA, 512),
		query("example.com.", dns.TypeA, 0),
		query("fo.example.com.", dns.TypeA, 4096),
		query("a.wild.example.com.", dns.TypeA, 0),
		query("cname.example.com.", dns.TypeA, 0),
		query("x.sub.example.com.", dns.TypeA, 0),
		query("nope.example.com.", dns.TypeAAAA, 1232),
		query("nope.example.org.", dns.TypeA, 0),
		query("www.example.com.", dns.TypeTXT, 0),
	} {
		f.Add(packed(f, q))
	}
	srv := New(fuzzStore(f), nil)
	f.Fuzz(func(t *testing.T, pkt []byte) {
		rp := newReply()
		fast := srv.answerPacket(rp, new(dns.Msg), pkt)
		slow := slowAnswer(t, srv, pkt)
		if !bytes.Equal(fast, slow) {
			t.Fatalf("answerPacket wrote\n%x\nmiekg/dns wrote\n%x", fast, slow)
		}
	})
}

// TestAnswerPacketAllocations pins the UDP listener's cost for the common query: answering
// a weighted A query from raw bytes allocates only the query name's string.
func TestAnswerPacketAllocations(t *testing.T) {
	st := newStore(t)
	id := newZone(t, st, "bench.test")
	apply(t, st, id,
		weighted("host1.bench.test", "A", "blue", 1, "10.0.0.1"),
		weighted("host1.bench.test", "A", "green", 3, "10.0.0.2"))
	srv := New(st, nil)
	for _, tt := range []struct {
		name string
		q    *dns.Msg
	}{
		{"without EDNS", query("host1.bench.test.", dns.TypeA, 0)},
		{"with EDNS", query("host1.bench.test.", dns.TypeA, 1232)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pkt := packed(t, tt.q)
			rp, req := newReply(), new(dns.Msg)
			allocs := testing.AllocsPerRun(100, func() {
				if srv.answerPacket(rp, req, pkt) == nil {
					t.Fatal("no reply")
				}
				rp.reset()
			})
			if allocs > 1 {
				t.Errorf("answerPacket allocates %v times per query, want at most 1 (the query name)", allocs)
			}
		})
	}
}
