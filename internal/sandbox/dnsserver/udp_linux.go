//go:build linux

package dnsserver

import (
	"net"

	"github.com/miekg/dns"
	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
)

// udpBatch is the most packets one recvmmsg or sendmmsg call moves.
const udpBatch = 32

// batchConn is the batch I/O of x/net's ipv4 and ipv6 packet conns (one Message type).
type batchConn interface {
	ReadBatch(ms []ipv4.Message, flags int) (int, error)
	WriteBatch(ms []ipv4.Message, flags int) (int, error)
}

// serveUDP answers the queries arriving on one UDP socket on this goroutine until the socket
// is closed. It follows Knot's model rather than miekg/dns's goroutine per packet: answering
// never blocks, so one reader per socket (and, through SO_REUSEPORT, one socket per CPU)
// keeps every CPU busy without a goroutine, buffer and writer per query. Under load one
// recvmmsg takes every queued query (up to udpBatch) and one sendmmsg sends their replies;
// a lone query costs the same two system calls as recvfrom and sendto.
func (s *Server) serveUDP(conn *net.UDPConn) error {
	var bc batchConn = ipv6.NewPacketConn(conn)
	if ua, ok := conn.LocalAddr().(*net.UDPAddr); ok && ua.IP.To4() != nil {
		bc = ipv4.NewPacketConn(conn)
	}
	in := make([]ipv4.Message, udpBatch)
	out := make([]ipv4.Message, udpBatch)
	replies := make([]*reply, udpBatch)
	for i := range in {
		// Queries larger than wireSize arrive cut short and get FORMERR; real ones are far
		// smaller, and a full 64 KiB buffer per slot would cost megabytes per socket.
		in[i].Buffers = [][]byte{make([]byte, wireSize)}
		out[i].Buffers = make([][]byte, 1)
		replies[i] = newReply()
	}
	req := new(dns.Msg)
	for {
		n, err := bc.ReadBatch(in, 0)
		if err != nil {
			if stop, err := readFailed(conn, err); stop {
				return err
			}
			continue
		}
		k := 0
		for i := range in[:n] {
			if wire := s.answerPacket(replies[i], req, in[i].Buffers[0][:in[i].N]); wire != nil {
				out[k].Buffers[0], out[k].Addr = wire, in[i].Addr
				k++
			}
		}
		s.sendBatch(bc, out[:k])
		for i := range in[:n] {
			replies[i].reset()
			in[i].Addr, out[i].Addr, out[i].Buffers[0] = nil, nil, nil
		}
	}
}

// sendBatch sends every reply in out. sendmmsg stops at the first message it cannot send
// (a client gone, a full buffer): that one is dropped, as UDP would, and the rest still go.
func (s *Server) sendBatch(bc batchConn, out []ipv4.Message) {
	for len(out) > 0 {
		n, err := bc.WriteBatch(out, 0)
		n = max(n, 0) // the raw call reports -1 with its error
		if err != nil && n < len(out) {
			s.log.Debug("dns reply not sent", "remote", out[n].Addr.String(), "err", err)
			n++
		}
		out = out[min(n, len(out)):]
	}
}
