package dnsserver

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestProtocolErrors covers malformed and unsupported requests, both through ServeDNS in
// process and as raw packets through the real UDP listener (where miekg/dns's accept
// function sees them first).
func TestProtocolErrors(t *testing.T) {
	st := newStore(t)
	id := newZone(t, st, "example.com")
	apply(t, st, id, simple("www.example.com", "A", 300, "192.0.2.1"))
	udpAddr, tcpAddr := serve(t, st)
	srv := New(st, nil)

	tests := []struct {
		name    string
		msg     func() *dns.Msg
		rcode   int
		opt     bool // reply must carry OPT
		noReply bool
		direct  bool // in process only: the packet cannot be packed or gets no reply
	}{
		{name: "no question", msg: func() *dns.Msg {
			m := query("www.example.com.", dns.TypeA, 0)
			m.Question = nil
			return m
		}, rcode: dns.RcodeFormatError},
		{name: "two questions", msg: func() *dns.Msg {
			m := query("www.example.com.", dns.TypeA, 0)
			m.Question = append(m.Question, dns.Question{Name: "example.com.", Qtype: dns.TypeSOA, Qclass: dns.ClassINET})
			return m
		}, rcode: dns.RcodeFormatError},
		{name: "opcode NOTIFY", msg: func() *dns.Msg {
			m := query("example.com.", dns.TypeSOA, 0)
			m.Opcode = dns.OpcodeNotify
			return m
		}, rcode: dns.RcodeNotImplemented},
		{name: "opcode STATUS", msg: func() *dns.Msg {
			m := query("example.com.", dns.TypeSOA, 0)
			m.Opcode = dns.OpcodeStatus
			return m
		}, rcode: dns.RcodeNotImplemented},
		{name: "opcode UPDATE", msg: func() *dns.Msg {
			m := query("example.com.", dns.TypeSOA, 0)
			m.Opcode = dns.OpcodeUpdate
			return m
		}, rcode: dns.RcodeNotImplemented},
		{name: "EDNS version 1", msg: func() *dns.Msg {
			m := query("www.example.com.", dns.TypeA, 1232)
			m.IsEdns0().SetVersion(1)
			return m
		}, rcode: dns.RcodeBadVers, opt: true},
		{name: "two OPT records", msg: func() *dns.Msg {
			m := query("www.example.com.", dns.TypeA, 1232)
			m.SetEdns0(4096, false)
			return m
		}, rcode: dns.RcodeFormatError},
		{name: "response is not answered", msg: func() *dns.Msg {
			m := query("www.example.com.", dns.TypeA, 0)
			m.Response = true
			return m
		}, noReply: true, direct: true},
		{name: "relative name", msg: func() *dns.Msg {
			return &dns.Msg{Question: []dns.Question{{Name: "www.example.com", Qtype: dns.TypeA, Qclass: dns.ClassINET}}}
		}, rcode: dns.RcodeFormatError, direct: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check := func(how string, r *dns.Msg) {
				t.Helper()
				if tc.noReply {
					if r != nil {
						t.Errorf("%s: got a reply to a response: %v", how, r)
					}
					return
				}
				if r == nil {
					t.Fatalf("%s: no reply", how)
				}
				if r.Rcode != tc.rcode {
					t.Errorf("%s: rcode %s, want %s", how, dns.RcodeToString[r.Rcode], dns.RcodeToString[tc.rcode])
				}
				if !r.Response || len(r.Answer) != 0 {
					t.Errorf("%s: QR=%v answers=%d", how, r.Response, len(r.Answer))
				}
				if got := r.IsEdns0() != nil; got != tc.opt {
					t.Errorf("%s: OPT in reply %v, want %v", how, got, tc.opt)
				}
			}
			for _, udp := range []bool{true, false} {
				check("ServeDNS", serveDirect(t, srv, tc.msg(), udp))
			}
			if !tc.direct {
				check("UDP", rawExchange(t, "udp", udpAddr, tc.msg()))
				check("TCP", rawExchange(t, "tcp", tcpAddr, tc.msg()))
			}
		})
	}
}

// rawExchange packs m as is and sends it over network, bypassing the client's checks.
func rawExchange(t *testing.T, network, addr string, m *dns.Msg) *dns.Msg {
	t.Helper()
	wire, err := m.Pack()
	if err != nil {
		t.Fatalf("pack: %v", err)
	}
	c, err := net.Dial(network, addr)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if network == "tcp" {
		wire = append([]byte{byte(len(wire) >> 8), byte(len(wire))}, wire...)
	}
	if _, err := c.Write(wire); err != nil {
		t.Fatalf("write: %v", err)
	}
	buf := make([]byte, 65537)
	var n int
	if network == "tcp" {
		if _, err = io.ReadFull(c, buf[:2]); err == nil {
			n = int(buf[0])<<8 | int(buf[1])
			_, err = io.ReadFull(c, buf[:n])
		}
	} else {
		n, err = c.Read(buf)
	}
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	r := new(dns.Msg)
	if err := r.Unpack(buf[:n]); err != nil {
		t.Fatalf("unpack reply: %v", err)
	}
	if r.Id != m.Id {
		t.Fatalf("reply id %d, want %d", r.Id, m.Id)
	}
	return r
}

// TestUDPMalformed sends raw packets that are not well-formed queries to the UDP listener:
// runts and responses get no reply, a packet whose sections do not parse gets FORMERR.
func TestUDPMalformed(t *testing.T) {
	st := newStore(t)
	newZone(t, st, "example.com")
	udpAddr, _ := serve(t, st)
	good, err := query("www.example.com.", dns.TypeA, 0).Pack()
	if err != nil {
		t.Fatal(err)
	}
	response := append([]byte(nil), good...)
	response[2] |= 0x80
	cut := append([]byte(nil), good[:len(good)-3]...) // question cut short
	tests := []struct {
		name   string
		packet []byte
		reply  bool
	}{
		{"runt", good[:5], false},
		{"response", response, false},
		{"question cut short", cut, true},
		{"header only claiming a question", good[:12], true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("udp", udpAddr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Write(tc.packet); err != nil {
				t.Fatal(err)
			}
			wait := 5 * time.Second
			if !tc.reply {
				wait = 300 * time.Millisecond
			}
			_ = c.SetReadDeadline(time.Now().Add(wait))
			buf := make([]byte, 512)
			n, err := c.Read(buf)
			if !tc.reply {
				if err == nil {
					t.Fatalf("got a %d-byte reply, want none", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("no reply: %v", err)
			}
			r := new(dns.Msg)
			if err := r.Unpack(buf[:n]); err != nil {
				t.Fatalf("reply does not unpack: %v", err)
			}
			if r.Id != binaryID(tc.packet) || !r.Response || r.Rcode != dns.RcodeFormatError {
				t.Errorf("reply id %d QR %v rcode %s, want id %d, QR, FORMERR", r.Id, r.Response, dns.RcodeToString[r.Rcode], binaryID(tc.packet))
			}
		})
	}
}

func binaryID(p []byte) uint16 { return uint16(p[0])<<8 | uint16(p[1]) }
