package dnsserver

import (
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/crossfade-io/crossfade/internal/elbzone"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// maxHops bounds a CNAME chain and a chain of aliases, as resolvers bound the chains they
// follow; it also ends loops the store cannot rule out (aliases are only checked to exist).
const maxHops = 8

// healthBudget bounds the sets one query may visit while evaluating target health, so that
// nested weighted aliases (100 sets a level) cannot make one query cost millions of look-ups.
const healthBudget = 256

// resolver answers one question. It lives on ServeDNS's stack and holds no locks: every
// node the store hands out is immutable.
type resolver struct {
	recs  Records
	qtype uint16
	typ   string // qtype as RRSet.Type spells it; empty for a type the store cannot hold
	// budget is what is left of healthBudget; at zero every further target counts as unhealthy.
	budget int
	// unknownLB, when set, is told of an alias target in an Elastic Load Balancing zone that
	// the store holds nothing for (the sandbox was never given the load balancer's addresses).
	unknownLB func(zoneID, name string)
}

// resolve fills m's sections and rcode for the canonical query name qname.
func (r *resolver) resolve(m *dns.Msg, qname string) {
	a, ok := r.recs.Lookup(qname)
	if !ok {
		if r.loadBalancer(m, qname) {
			return
		}
		// Route 53's name servers refuse names outside the zones they host.
		m.Rcode = dns.RcodeRefused
		return
	}
	m.Authoritative = true
	if cut := r.delegation(a, qname); cut != nil {
		r.referral(m, a, cut)
		return
	}
	if !a.Exists {
		m.Rcode = dns.RcodeNameError
		negative(m, a.SOA)
		return
	}
	if r.qtype == dns.TypeANY {
		m.Answer = r.answerAny(m.Answer, a.Node, qname)
		if len(m.Answer) == 0 {
			negative(m, a.SOA)
		}
		return
	}
	var target string
	m.Answer, target = r.answerAt(m.Answer, a.Node, r.typ, qname, 0)
	if len(m.Answer) == 0 {
		negative(m, a.SOA) // NODATA, including an empty non-terminal (a.Node nil)
		return
	}
	if r.qtype != dns.TypeCNAME {
		r.chase(m, qname, target)
	}
}

// loadBalancer answers qname when it is the DNS name of a load balancer the sandbox knows
// (SetLoadBalancer), as Elastic Load Balancing's own name servers answer it: its addresses
// with ELB's TTL, NODATA for a family it has none of. It stands in for those servers, so
// that what an alias to the load balancer answers can be checked against the load
// balancer's own answer (the DNS gate and `crossfade verify` attribute alias answers so).
// It reports false for any other name: the server refuses it.
func (r *resolver) loadBalancer(m *dns.Msg, qname string) bool {
	zoneID, ok := elbzone.ZoneFor(qname)
	if !ok {
		return false
	}
	n := r.recs.LookupIn(zoneID, qname)
	if n == nil {
		return false
	}
	m.Authoritative = true
	if r.qtype == dns.TypeANY {
		m.Answer = r.answerAny(m.Answer, n, qname)
		return true
	}
	m.Answer, _ = r.answerAt(m.Answer, n, r.typ, qname, 0)
	return true
}

// chase follows a CNAME chain through the sandbox's zones, appending each target's answer,
// as Route 53 does for targets in zones it hosts. A target outside every zone ends the chain
// with NOERROR: the resolver follows it itself. The last name's NXDOMAIN or NODATA is the
// reply's rcode and authority, per RFC 6604.
func (r *resolver) chase(m *dns.Msg, qname, target string) {
	var seen [maxHops]string
	for hops := 0; target != "" && hops < maxHops; hops++ {
		target = strings.ToLower(target)
		if target == qname || slices.Contains(seen[:hops], target) {
			return // a loop: what was appended already shows it to the client
		}
		seen[hops] = target
		a, ok := r.recs.Lookup(target)
		if !ok {
			return
		}
		if !a.Exists {
			m.Rcode = dns.RcodeNameError
			negative(m, a.SOA)
			return
		}
		before := len(m.Answer)
		m.Answer, target = r.answerAt(m.Answer, a.Node, r.typ, target, hops+1)
		if len(m.Answer) == before {
			negative(m, a.SOA)
			return
		}
	}
}

// answerAt appends the records that answer type typ at node n, owned by owner, and returns
// the CNAME target to chase, if the answer is a CNAME. A name with a CNAME answers every
// type with it (the store lets nothing else live beside a CNAME, so looking for typ first
// costs nothing); a query for CNAME itself gets the CNAME and no chase.
func (r *resolver) answerAt(out []dns.RR, n *zones.Node, typ, owner string, depth int) ([]dns.RR, string) {
	g := n.Group(typ)
	if g == nil && typ != "CNAME" {
		g = n.Group("CNAME")
	}
	if g == nil {
		return out, ""
	}
	m := r.choose(g, depth)
	if m == nil {
		return out, ""
	}
	if m.Plain && owner == g.Name {
		// The records answer as stored: the common answer reads nothing but the group.
		out = append(out, m.Records...)
		target := ""
		if g.Type == "CNAME" {
			for _, rr := range m.Records {
				if c, ok := rr.(*dns.CNAME); ok {
					target = c.Target
				}
			}
		}
		return out, target
	}
	return r.emit(out, m.Set, owner, depth)
}

// answerAny answers qtype ANY with every type at the name, each group chosen by its routing
// policy as a query for that type would be. Unlike RFC 8482's minimal answer this is what an
// emulator's user expects to see when debugging with `dig ANY`; CNAME targets are not chased.
func (r *resolver) answerAny(out []dns.RR, n *zones.Node, owner string) []dns.RR {
	if n == nil {
		return out
	}
	for i := 0; i < len(n.Sets); {
		j := i + 1
		for j < len(n.Sets) && n.Sets[j].Type == n.Sets[i].Type {
			j++
		}
		out, _ = r.emit(out, r.pick(n.Sets[i:j], 0), owner, 0)
		i = j
	}
	return out
}

// emit appends set's answer owned by owner. An alias answers with its target's records,
// chosen at the target by the target's own routing policy, renamed to owner and with the
// target's TTL, as Route 53 answers an alias. An alias whose target has no records of its
// type but a CNAME answers with that CNAME, renamed, and the chain continues from it: the
// store accepts such aliases, and a CNAME is what the target name would answer.
func (r *resolver) emit(out []dns.RR, set *zones.RRSet, owner string, depth int) ([]dns.RR, string) {
	if set == nil {
		return out, ""
	}
	if a := set.Alias; a != nil {
		if depth >= maxHops {
			return out, ""
		}
		n := r.recs.LookupIn(a.HostedZoneID, a.DNSName)
		if n == nil && r.unknownLB != nil && elbzone.IsCanonicalZone(a.HostedZoneID) {
			r.unknownLB(a.HostedZoneID, a.DNSName)
		}
		return r.answerAt(out, n, set.Type, owner, depth+1)
	}
	target := ""
	for _, rr := range set.DNSRecords() {
		if rr.Header().Name != owner {
			rr = withOwner(rr, owner) // wildcard or alias: the store's record must stay as stored
		}
		out = append(out, rr)
		if c, ok := rr.(*dns.CNAME); ok {
			target = c.Target
		}
	}
	return out, target
}

// group returns the sets of one type at n, nil if there are none.
func group(n *zones.Node, typ string) []*zones.RRSet {
	if g := n.Group(typ); g != nil {
		return g.Sets
	}
	return nil
}

// delegation returns the NS set of the zone cut closest to the apex that lies strictly below
// the apex and at or above qname, nil if there is none: Route 53 answers a name at or below
// a delegation with a referral. A DS query at the cut itself belongs to the parent side.
func (r *resolver) delegation(a zones.Answer, qname string) *zones.RRSet {
	if !a.HasCuts {
		return nil // no NS set below the apex: nothing to look up, name by name
	}
	var cut *zones.RRSet
	for off, end := 0, false; !end; off, end = dns.NextLabel(qname, off) {
		name := qname[off:]
		if len(name) <= len(a.Apex) {
			break
		}
		var g []*zones.RRSet
		if off > 0 {
			g = group(r.recs.LookupIn(a.ZoneID, name), "NS")
		} else if g = group(a.Node, "NS"); len(g) > 0 && g[0].Name != qname {
			// A wildcard stood in for a missing name: it is no cut. The names are compared
			// only where there is an NS set, because reading a set's name costs a cache miss
			// on every query, and NS sets below the apex are rare.
			g = nil
		}
		if len(g) > 0 {
			cut = g[0]
		}
	}
	if cut != nil && cut.Name == qname && r.qtype == dns.TypeDS {
		return nil
	}
	return cut
}

// referral answers a name below a zone cut: not authoritative, the cut's NS records in the
// authority section and the addresses of name servers inside the zone as glue.
func (r *resolver) referral(m *dns.Msg, a zones.Answer, cut *zones.RRSet) {
	m.Authoritative = false
	m.Ns = append(m.Ns, cut.DNSRecords()...)
	for _, rr := range cut.DNSRecords() {
		ns, ok := rr.(*dns.NS)
		if !ok {
			continue
		}
		host := strings.ToLower(ns.Ns)
		if !dns.IsSubDomain(a.Apex, host) {
			continue
		}
		n := r.recs.LookupIn(a.ZoneID, host)
		for _, typ := range [...]string{"A", "AAAA"} {
			if g := group(n, typ); len(g) > 0 && g[0].Alias == nil {
				m.Extra, _ = r.emit(m.Extra, r.pick(g, 0), host, 0)
			}
		}
	}
}

// negative puts the zone's SOA in the authority section of an NXDOMAIN or NODATA reply, with
// the TTL Route 53 gives it: the lower of the SOA's own TTL and its MINIMUM field (RFC 2308).
func negative(m *dns.Msg, soa *zones.RRSet) {
	if soa == nil {
		return
	}
	rrs := soa.DNSRecords()
	if len(rrs) == 0 {
		return
	}
	s, ok := rrs[0].(*dns.SOA)
	if !ok {
		return
	}
	if s.Hdr.Ttl <= s.Minttl {
		m.Ns = append(m.Ns, s)
		return
	}
	c := *s
	c.Hdr.Ttl = s.Minttl
	m.Ns = append(m.Ns, &c)
}

// withOwner returns a copy of rr owned by name. The common types are copied shallowly: the
// copy shares rdata slices (an IP, TXT strings) with rr, which is safe because neither the
// store nor packing ever writes to them; any other type is deep-copied.
func withOwner(rr dns.RR, name string) dns.RR {
	var c dns.RR
	switch v := rr.(type) {
	case *dns.A:
		c = shallow(v)
	case *dns.AAAA:
		c = shallow(v)
	case *dns.CNAME:
		c = shallow(v)
	case *dns.TXT:
		c = shallow(v)
	case *dns.MX:
		c = shallow(v)
	case *dns.SRV:
		c = shallow(v)
	case *dns.NS:
		c = shallow(v)
	case *dns.PTR:
		c = shallow(v)
	case *dns.CAA:
		c = shallow(v)
	default:
		c = dns.Copy(rr)
	}
	c.Header().Name = name
	return c
}

// shallow copies the record p points at: one generic copy serves every common type, so
// that a new type is a case line in withOwner and no copy of its own.
func shallow[T any, P interface {
	*T
	dns.RR
}](p P) dns.RR {
	x := *p
	return P(&x)
}
