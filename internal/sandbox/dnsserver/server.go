// Package dnsserver is the sandbox's authoritative DNS server: it answers queries over UDP
// and TCP from the hosted zones of a record store with Route 53's routing semantics
// (weighted and failover choice, health, alias, CNAME chains, wildcards, negative answers).
package dnsserver

import (
	"log/slog"
	"net"
	"strings"
	"sync"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// Records is the part of the record store the server answers from.
type Records interface {
	// Lookup finds the zone that holds qname (canonical: lower-case, absolute) and the sets
	// at that name or at the wildcard that matches it; ok is false outside every zone.
	Lookup(qname string) (zones.Answer, bool)
	// LookupIn returns the sets at name inside one zone, nil if there are none.
	LookupIn(zoneID, name string) *zones.Node
	// Healthy reports a health check's status; an empty id is healthy.
	Healthy(healthCheckID string) bool
}

// advertisedUDPSize is the EDNS0 payload size the server advertises: the DNS Flag Day 2020
// value, which avoids IP fragmentation on every common path.
const advertisedUDPSize = 1232

// Server answers DNS queries from a Records store. It implements dns.Handler and is safe
// for concurrent use: it keeps no per-query state outside the call.
type Server struct {
	recs Records
	log  *slog.Logger
	// unknownLB holds the load balancer names an alias pointed at that the sandbox did not
	// know, so that each is explained in the log once, not once per query.
	unknownLB sync.Map
	// noteUnknownLB is s.unknownLoadBalancer, bound once: a method value made per query
	// would cost every query an allocation.
	noteUnknownLB func(zoneID, name string)
}

// New returns a server answering from recs; a nil logger discards logs.
func New(recs Records, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{recs: recs, log: logger}
	s.noteUnknownLB = s.unknownLoadBalancer
	return s
}

// ServeDNS answers one query. Responses (QR set) get no answer so that two servers can never
// bounce packets at each other.
func (s *Server) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	if req == nil || req.Response {
		return
	}
	rp := getReply()
	defer rp.release()
	wire := s.answer(rp, req, isUDP(w))
	if wire == nil {
		return
	}
	if _, err := w.Write(wire); err != nil {
		s.log.Debug("dns reply not sent", "qname", questionName(req), "remote", w.RemoteAddr(), "err", err)
	}
}

// answer builds the reply to req in rp, truncated to what the transport allows, and returns
// it packed into rp's buffer; nil if not even an error reply packs.
func (s *Server) answer(rp *reply, req *dns.Msg, udp bool) []byte {
	m := &rp.msg
	limit := s.respond(rp, req, udp)
	// The common reply packs without miekg/dns, into the same bytes.
	if wire, ok := packReply(m, rp.wire, limit); ok {
		return wire
	}
	return s.pack(rp, req, limit)
}

// pack packs rp's reply to req with miekg/dns, truncated to limit; nil if not even an error
// reply packs.
func (s *Server) pack(rp *reply, req *dns.Msg, limit int) []byte {
	m := &rp.msg
	// Pack first and truncate only what does not fit: sizing a message costs a walk over
	// it, and almost every reply fits. Truncate compresses before it drops records.
	wire, err := m.PackBuffer(rp.wire)
	if err == nil && len(wire) > limit {
		m.Truncate(limit)
		wire, err = m.PackBuffer(rp.wire)
	}
	if err == nil {
		return wire
	}
	// Only a record the store should never hold can get here; SERVFAIL is still an answer
	// the client can act on, where silence costs it a timeout.
	s.log.Error("dns reply does not pack", "qname", questionName(req), "err", err)
	m.Rcode = dns.RcodeServerFailure
	m.Question, m.Answer, m.Ns, m.Extra = m.Question[:0], m.Answer[:0], m.Ns[:0], m.Extra[:0]
	if wire, err = m.PackBuffer(rp.wire); err != nil {
		return nil
	}
	return wire
}

// respond fills rp.msg with the reply to req and returns the largest size the reply may have.
func (s *Server) respond(rp *reply, req *dns.Msg, udp bool) (limit int) {
	m := &rp.msg
	m.Id = req.Id
	m.Response = true
	m.Opcode = req.Opcode
	if req.Opcode == dns.OpcodeQuery {
		m.RecursionDesired = req.RecursionDesired
		m.CheckingDisabled = req.CheckingDisabled
	}
	if len(req.Question) > 0 {
		m.Question = append(m.Question, req.Question[0])
	}

	limit = dns.MaxMsgSize
	if udp {
		limit = dns.MinMsgSize
	}
	opt, opts := findOPT(req.Extra)
	switch {
	case opts > 1:
		// RFC 6891 6.1.1: more than one OPT is a format error, answered without OPT.
		m.Rcode = dns.RcodeFormatError
		return limit
	case opt != nil:
		rp.opt = dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: advertisedUDPSize}}
		m.Extra = append(m.Extra, &rp.opt)
		if udp {
			limit = max(int(opt.UDPSize()), dns.MinMsgSize)
		}
		if opt.Version() != 0 {
			m.Rcode = dns.RcodeBadVers
			return limit
		}
	}

	switch {
	case req.Opcode != dns.OpcodeQuery:
		m.Rcode = dns.RcodeNotImplemented
		return limit
	case len(req.Question) != 1:
		m.Rcode = dns.RcodeFormatError
		return limit
	}
	q := req.Question[0]
	switch {
	case !dns.IsFqdn(q.Name):
		// Only a hand-built message gets here (unpacked names are absolute); a relative
		// name cannot be packed, so it is not echoed.
		m.Rcode = dns.RcodeFormatError
		m.Question = m.Question[:0]
	case q.Qclass != dns.ClassINET:
		// The store holds class IN only; REFUSED tells a resolver to ask elsewhere.
		m.Rcode = dns.RcodeRefused
	case q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR:
		// Route 53 does not offer zone transfers.
		m.Rcode = dns.RcodeRefused
	default:
		r := resolver{recs: s.recs, qtype: q.Qtype, typ: dns.TypeToString[q.Qtype], budget: healthBudget, unknownLB: s.noteUnknownLB}
		r.resolve(m, strings.ToLower(q.Name))
	}
	return limit
}

// findOPT returns the last OPT record of a request's additional section and how many there are.
func findOPT(extra []dns.RR) (*dns.OPT, int) {
	var opt *dns.OPT
	n := 0
	for _, rr := range extra {
		if o, ok := rr.(*dns.OPT); ok {
			opt = o
			n++
		}
	}
	return opt, n
}

// isUDP tells the transport from the writer's local address, which miekg/dns keeps as the
// listener's *net.UDPAddr or *net.TCPAddr.
func isUDP(w dns.ResponseWriter) bool {
	_, ok := w.LocalAddr().(*net.UDPAddr)
	return ok
}

func questionName(m *dns.Msg) string {
	if len(m.Question) == 0 {
		return ""
	}
	return m.Question[0].Name
}

// unknownLoadBalancer explains, once per name, why an alias to a load balancer answers
// NODATA: the sandbox stands in for Elastic Load Balancing's name servers only for the load
// balancers it was told about, and a user reading `dig` output cannot tell that from a
// broken record.
func (s *Server) unknownLoadBalancer(zoneID, name string) {
	// ELB answers "dualstack.NAME" for NAME: one load balancer, one line, one path.
	lb := strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(name), "."), "dualstack.")
	if _, seen := s.unknownLB.LoadOrStore(lb, struct{}{}); seen {
		return
	}
	s.log.Warn(`alias to a load balancer the sandbox does not know answers NODATA; set its addresses with PUT /_sandbox/loadbalancers/`+lb+` {"addresses": ["192.0.2.10"]}`,
		"load_balancer", lb, "zone_id", zoneID)
}
