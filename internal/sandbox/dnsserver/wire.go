package dnsserver

import (
	"encoding/binary"
	"strings"

	"github.com/miekg/dns"
)

// The hot path of the UDP listener reads and writes the wire format itself for the one shape
// nearly every query and reply has, and hands everything else to miekg/dns. Both shortcuts
// are exact: they accept only messages for which they produce what miekg/dns would (the
// same request fields, the same reply bytes), so answering logic stays in one place and a
// message they decline costs nothing but the check.

// Header bits of the second header word.
const (
	bitQR = 1 << 15
	bitAA = 1 << 10
	bitTC = 1 << 9
	bitRD = 1 << 8
	bitRA = 1 << 7
	bitZ  = 1 << 6
	bitAD = 1 << 5
	bitCD = 1 << 4
)

// maxNameWire is miekg/dns's bound on a name's wire length (labels and their length octets,
// without the root's zero octet): it refuses a name at which this budget reaches zero.
const maxNameWire = 255

// parseQuery fills req from pkt when pkt is a plain query: one question whose name is
// uncompressed and needs no escaping in presentation form, no answer or authority records,
// at most an OPT record without options, and nothing after it. opt holds the request's OPT
// record when there is one. It reports false, leaving req and opt unspecified, for every
// other packet: miekg/dns's Unpack reads those. For the packets it accepts, req holds what
// Unpack would have put there.
func parseQuery(req *dns.Msg, opt *dns.OPT, pkt []byte) bool {
	if len(pkt) < headerSize {
		return false
	}
	bits := binary.BigEndian.Uint16(pkt[2:])
	qd, an := binary.BigEndian.Uint16(pkt[4:]), binary.BigEndian.Uint16(pkt[6:])
	ns, ar := binary.BigEndian.Uint16(pkt[8:]), binary.BigEndian.Uint16(pkt[10:])
	if qd != 1 || an != 0 || ns != 0 || ar > 1 {
		return false
	}
	var buf [maxNameWire]byte
	name := buf[:0]
	off, budget := headerSize, maxNameWire
	for {
		if off >= len(pkt) {
			return false
		}
		c := int(pkt[off])
		off++
		if c == 0 {
			break
		}
		budget -= c + 1
		// c > 63 is a pointer or a reserved label type: left to Unpack.
		if c > 63 || budget <= 0 || off+c > len(pkt) {
			return false
		}
		for _, b := range pkt[off : off+c] {
			if b <= ' ' || b > '~' || isLabelSpecial(b) {
				return false
			}
		}
		name = append(append(name, pkt[off:off+c]...), '.')
		off += c
	}
	if len(name) == 0 {
		name = append(name, '.')
	}
	if off+4 > len(pkt) {
		return false
	}
	q := dns.Question{
		Name:   string(name),
		Qtype:  binary.BigEndian.Uint16(pkt[off:]),
		Qclass: binary.BigEndian.Uint16(pkt[off+2:]),
	}
	off += 4
	rcode := int(bits & 0xF)
	if ar == 1 {
		// An OPT record: root owner, type OPT, the payload size as class, the extended rcode,
		// version and flags as TTL, no options (Unpack parses and checks options itself).
		if len(pkt)-off != 11 || pkt[off] != 0 || binary.BigEndian.Uint16(pkt[off+1:]) != dns.TypeOPT ||
			binary.BigEndian.Uint16(pkt[off+9:]) != 0 {
			return false
		}
		*opt = dns.OPT{Hdr: dns.RR_Header{
			Name:   ".",
			Rrtype: dns.TypeOPT,
			Class:  binary.BigEndian.Uint16(pkt[off+3:]),
			Ttl:    binary.BigEndian.Uint32(pkt[off+5:]),
		}}
		rcode |= opt.ExtendedRcode()
		off += 11
	}
	if off != len(pkt) {
		return false // trailing bytes: Unpack ignores them, and so does a packet left to it
	}
	*req = dns.Msg{
		MsgHdr: dns.MsgHdr{
			Id:                 binary.BigEndian.Uint16(pkt),
			Response:           bits&bitQR != 0,
			Opcode:             int(bits>>11) & 0xF,
			Authoritative:      bits&bitAA != 0,
			Truncated:          bits&bitTC != 0,
			RecursionDesired:   bits&bitRD != 0,
			RecursionAvailable: bits&bitRA != 0,
			Zero:               bits&bitZ != 0,
			AuthenticatedData:  bits&bitAD != 0,
			CheckingDisabled:   bits&bitCD != 0,
			Rcode:              rcode,
		},
		Question: append(req.Question[:0], q),
		Extra:    req.Extra[:0],
	}
	if ar == 1 {
		req.Extra = append(req.Extra, opt)
	}
	return true
}

// isLabelSpecial reports the bytes miekg/dns escapes with a backslash in a label.
func isLabelSpecial(b byte) bool {
	switch b {
	case '.', ' ', '\'', '@', ';', '(', ')', '"', '\\':
		return true
	}
	return false
}

// packReply packs m into buf the way m.PackBuffer(buf) would, byte for byte, when m is the
// common reply: at most one question, A and AAAA answers only, no authority records, and at
// most one OPT record without options in the additional section, all names plain. It
// reports false for anything else, and for a reply longer than limit (truncation is left to
// miekg/dns), leaving buf's contents unspecified.
func packReply(m *dns.Msg, buf []byte, limit int) ([]byte, bool) {
	if m.Compress || m.Rcode < 0 || m.Rcode > 0xF || len(m.Question) > 1 || len(m.Ns) != 0 || len(m.Extra) > 1 {
		return nil, false
	}
	limit = min(limit, len(buf))
	b := buf[:0]
	var bits uint16 = uint16(m.Opcode)<<11 | uint16(m.Rcode)
	for _, f := range [...]struct {
		set bool
		bit uint16
	}{
		{m.Response, bitQR}, {m.Authoritative, bitAA}, {m.Truncated, bitTC}, {m.RecursionDesired, bitRD},
		{m.RecursionAvailable, bitRA}, {m.Zero, bitZ}, {m.AuthenticatedData, bitAD}, {m.CheckingDisabled, bitCD},
	} {
		if f.set {
			bits |= f.bit
		}
	}
	b = binary.BigEndian.AppendUint16(b, m.Id)
	b = binary.BigEndian.AppendUint16(b, bits)
	b = binary.BigEndian.AppendUint16(b, uint16(len(m.Question)))
	b = binary.BigEndian.AppendUint16(b, uint16(len(m.Answer)))
	b = binary.BigEndian.AppendUint16(b, 0)
	b = binary.BigEndian.AppendUint16(b, uint16(len(m.Extra)))
	// qname and its wire form, so that answers owned by it copy the bytes.
	qname, qwire := "", []byte(nil)
	if len(m.Question) == 1 {
		q := m.Question[0]
		start := len(b)
		var ok bool
		if b, ok = appendName(b, q.Name); !ok {
			return nil, false
		}
		qname, qwire = q.Name, b[start:]
		b = binary.BigEndian.AppendUint16(b, q.Qtype)
		b = binary.BigEndian.AppendUint16(b, q.Qclass)
	}
	for _, rr := range m.Answer {
		h := rr.Header()
		var rdata []byte
		switch v := rr.(type) {
		case *dns.A:
			if rdata = v.A.To4(); rdata == nil {
				return nil, false
			}
		case *dns.AAAA:
			if len(v.AAAA) != 16 {
				return nil, false
			}
			rdata = v.AAAA
		default:
			return nil, false
		}
		if len(b)+len(h.Name)+1+10+len(rdata) > limit {
			return nil, false // the name's wire form is at most one octet longer than its text
		}
		if h.Name == qname {
			b = append(b, qwire...)
		} else {
			var ok bool
			if b, ok = appendName(b, h.Name); !ok {
				return nil, false
			}
		}
		b = binary.BigEndian.AppendUint16(b, h.Rrtype)
		b = binary.BigEndian.AppendUint16(b, h.Class)
		b = binary.BigEndian.AppendUint32(b, h.Ttl)
		b = binary.BigEndian.AppendUint16(b, uint16(len(rdata)))
		b = append(b, rdata...)
	}
	if len(m.Extra) == 1 {
		opt, ok := m.Extra[0].(*dns.OPT)
		if !ok || len(opt.Option) != 0 || opt.Hdr.Name != "." {
			return nil, false
		}
		// PackBuffer writes the reply's extended rcode (here 0) into the OPT record.
		opt.SetExtendedRcode(uint16(m.Rcode))
		b = append(b, 0)
		b = binary.BigEndian.AppendUint16(b, opt.Hdr.Rrtype)
		b = binary.BigEndian.AppendUint16(b, opt.Hdr.Class)
		b = binary.BigEndian.AppendUint32(b, opt.Hdr.Ttl)
		b = binary.BigEndian.AppendUint16(b, 0)
	}
	if len(b) > limit {
		return nil, false
	}
	return b, true
}

// appendName appends the uncompressed wire form of an absolute name with no escapes and
// reports false for any other name (escapes, empty labels, labels or names too long).
func appendName(b []byte, name string) ([]byte, bool) {
	if name == "." {
		return append(b, 0), true
	}
	if len(name) == 0 || name[len(name)-1] != '.' || len(name) > maxNameWire-1 || strings.IndexByte(name, '\\') >= 0 {
		return b, false
	}
	for rest := name; rest != ""; {
		i := strings.IndexByte(rest, '.')
		if i <= 0 || i > 63 {
			return b, false
		}
		b = append(append(b, byte(i)), rest[:i]...)
		rest = rest[i+1:]
	}
	return append(b, 0), true
}
