package dnsserver

import (
	"sync"

	"github.com/miekg/dns"
)

// wireSize is the packing buffer kept with a pooled reply: large enough for any UDP answer
// the server gives without EDNS0 sizes above it, so the common case never allocates.
const wireSize = 4096

// reply is one response under construction. Replies are pooled because ServeDNS is the hot
// path: reusing the message, its section slices, the OPT record and the wire buffer keeps a
// typical answer free of allocations.
type reply struct {
	msg  dns.Msg
	opt  dns.OPT
	wire []byte
	// query is the request's OPT record when parseQuery read the request.
	query dns.OPT
}

func newReply() *reply {
	return &reply{
		msg: dns.Msg{
			Question: make([]dns.Question, 0, 1),
			Answer:   make([]dns.RR, 0, 8),
			Ns:       make([]dns.RR, 0, 4),
			Extra:    make([]dns.RR, 0, 4),
		},
		wire: make([]byte, wireSize),
	}
}

var replies = sync.Pool{New: func() any { return newReply() }}

func getReply() *reply { return replies.Get().(*reply) }

// release resets rp and returns it to the pool.
func (rp *reply) release() {
	rp.reset()
	replies.Put(rp)
}

// reset empties rp for the next query. The sections are cleared up to their capacity, not
// just their length, because Truncate shortens them and would leave records reachable.
func (rp *reply) reset() {
	m := &rp.msg
	clear(m.Question[:cap(m.Question)])
	clear(m.Answer[:cap(m.Answer)])
	clear(m.Ns[:cap(m.Ns)])
	clear(m.Extra[:cap(m.Extra)])
	*m = dns.Msg{Question: m.Question[:0], Answer: m.Answer[:0], Ns: m.Ns[:0], Extra: m.Extra[:0]}
	rp.opt = dns.OPT{}
	rp.query = dns.OPT{}
}
