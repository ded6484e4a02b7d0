package dnsserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"

	"github.com/miekg/dns"
)

// headerSize is the fixed DNS header; anything shorter is not a DNS message.
const headerSize = 12

// answerPacket answers one raw UDP query into rp, reusing req to unpack it (parseQuery reads
// the common query, miekg/dns the rest), and treats bad
// packets as miekg/dns's server does before it calls a handler: no reply to a runt or to a
// response (so that two servers cannot bounce packets), FORMERR to a message that does not
// unpack. It returns the packed reply, nil for none.
func (s *Server) answerPacket(rp *reply, req *dns.Msg, pkt []byte) []byte {
	if len(pkt) < headerSize || pkt[2]&0x80 != 0 {
		return nil
	}
	if parseQuery(req, &rp.query, pkt) {
		return s.answer(rp, req, true)
	}
	*req = dns.Msg{}
	if err := req.Unpack(pkt); err != nil {
		m := &rp.msg
		m.Id = binary.BigEndian.Uint16(pkt)
		m.Response = true
		m.Opcode = int(pkt[2]>>3) & 0xF
		m.Rcode = dns.RcodeFormatError
		wire, err := m.PackBuffer(rp.wire)
		if err != nil {
			return nil
		}
		return wire
	}
	return s.answer(rp, req, true)
}

// readFailed says whether a read error ends serving, and with what: a closed socket ends it
// cleanly (the server is stopping), a timeout does not end it, anything else is returned.
func readFailed(conn *net.UDPConn, err error) (stop bool, _ error) {
	if errors.Is(err, net.ErrClosed) {
		return true, nil
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return false, nil
	}
	return true, fmt.Errorf("read udp %s: %w", conn.LocalAddr(), err)
}
