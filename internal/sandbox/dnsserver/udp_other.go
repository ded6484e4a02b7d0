//go:build !linux

package dnsserver

import (
	"net"

	"github.com/miekg/dns"
)

// serveUDP answers the queries arriving on one UDP socket, one after another on this
// goroutine, until the socket is closed. This is Knot's model rather than miekg/dns's
// goroutine per packet: answering never blocks, so a reader per socket (and a socket per
// CPU through SO_REUSEPORT) keeps every CPU busy without a goroutine, a buffer and a
// response writer per query, and plain recvfrom/sendto skip the per-packet control messages.
func (s *Server) serveUDP(conn *net.UDPConn) error {
	buf := make([]byte, dns.MaxMsgSize)
	rp := newReply()
	req := new(dns.Msg)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if stop, err := readFailed(conn, err); stop {
				return err
			}
			continue
		}
		if wire := s.answerPacket(rp, req, buf[:n]); wire != nil {
			if _, err := conn.WriteToUDPAddrPort(wire, from); err != nil {
				s.log.Debug("dns reply not sent", "remote", from.String(), "err", err)
			}
		}
		rp.reset()
	}
}
