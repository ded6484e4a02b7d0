package zones

import (
	"net"

	"github.com/miekg/dns"
)

// Choice says how a query chooses the one member of a Group that answers.
type Choice uint8

// The ways a group's answer is chosen. Only ChooseByHealth needs anything beyond the group
// itself; the others were settled when the node was published.
const (
	// ChooseByHealth: a failover group, or a weighted group with a member whose answer
	// depends on health (a health check, or an alias evaluating target health). The DNS
	// server applies Route 53's rules to Sets on every query, since health changes without
	// republishing nodes.
	ChooseByHealth Choice = iota
	// ChooseFirst: a simple set or a lone set of any policy; Members[0] answers. Route 53
	// answers a lone set whatever its health: with every set unhealthy, all count as healthy.
	ChooseFirst
	// ChooseWeighted: a weighted group no member of which depends on health. A draw n in
	// [0, Total) picks the first member with n < Cum; with Total 0 every member has weight 0
	// and each is equally likely.
	ChooseWeighted
)

// Member is one set of a Group with what answering from it needs, read without following
// the set's pointers.
type Member struct {
	// Records holds Set.DNSRecords(), or copies of them kept beside the group, equal to them.
	Records []dns.RR
	// Cum is the sum of the weights of this member and every member before it.
	Cum uint64
	// Plain reports that the set is no alias and every record's owner is spelled exactly
	// as Set.Name: an answer owned by that name is Records as they are.
	Plain bool
	// Set is the record set itself, for what the prepared fields do not cover (alias,
	// health, renaming).
	Set *RRSet
}

// Group is the record sets of one type at a node, prepared for answering when the node is
// published, so that a query does one look-up and at most one random draw.
type Group struct {
	// Type is the sets' type, interned (see internType). The fields a query reads come first.
	Type string
	// Choice is how a query picks its member.
	Choice Choice
	// Total is the sum of the members' weights (weighted groups only).
	Total uint64
	// Members holds one entry per set, in Sets order.
	Members []Member
	// Name is the owner name of the sets.
	Name string
	// Sets are the group's sets in node order: a sub-slice of Node.Sets.
	Sets []*RRSet
}

// Group returns the sets of type typ at n, nil if there are none (or n is nil). A node has
// few types, so a linear scan beats anything cleverer; typ spelled as dns.TypeToString
// spells it compares by pointer.
func (n *Node) Group(typ string) *Group {
	if n == nil {
		return nil
	}
	for i := range n.groups {
		if n.groups[i].Type == typ {
			return &n.groups[i]
		}
	}
	return nil
}

// newNode builds the immutable node holding sets (sorted by compareInNode, all of one
// owner name), with each type's group prepared for answering.
func newNode(sets []*RRSet) *Node {
	types, records := 0, 0
	for i, set := range sets {
		if i == 0 || set.Type != sets[i-1].Type {
			types++
		}
		records += len(set.rrs)
	}
	var n *Node
	var members []Member
	if types == 1 && len(sets) <= smallMembers && records <= smallRecords {
		n = newSmallNode(sets)
		members = n.groups[0].Members[:len(sets)]
		n.groups = n.groups[:0]
	} else {
		n = &Node{Sets: sets, groups: make([]Group, 0, types)}
		members = make([]Member, len(sets))
		for i, set := range sets {
			members[i].Records = set.rrs
		}
	}
	for i := 0; i < len(sets); {
		j := i + 1
		for j < len(sets) && sets[j].Type == sets[i].Type {
			j++
		}
		n.groups = append(n.groups, newGroup(sets[i:j], members[i:j:j]))
		i = j
	}
	return n
}

// newGroup prepares the sets g of one type, filling members (one per set).
func newGroup(g []*RRSet, members []Member) Group {
	grp := Group{Name: g[0].Name, Type: g[0].Type, Sets: g, Members: members, Choice: ChooseFirst}
	byHealth := false
	for i, set := range g {
		m := &members[i]
		m.Set, m.Plain = set, set.Alias == nil
		for _, rr := range set.rrs {
			if rr.Header().Name != set.Name {
				m.Plain = false
			}
		}
		if set.Weight != nil && *set.Weight > 0 {
			grp.Total += uint64(*set.Weight)
		}
		m.Cum = grp.Total
		if set.HealthCheckID != "" || set.Alias != nil && set.Alias.EvaluateTargetHealth {
			byHealth = true
		}
	}
	switch {
	case len(g) == 1:
	case g[0].Policy() == "weighted" && byHealth, g[0].Policy() == "failover":
		grp.Choice = ChooseByHealth
	case g[0].Policy() == "weighted":
		grp.Choice = ChooseWeighted
	}
	return grp
}

// The largest node kept in one allocation: one type, a weighted pair of one record each
// (external-dns's blue/green records) or a simple set of up to two records.
const (
	smallMembers = 2
	smallRecords = 2
)

// smallNode is a node, its group, members and records, and copies of its A records in one
// allocation: answering a query follows pointers within a few adjacent cache lines, where a
// node built from separate objects costs a cache miss at each.
type smallNode struct {
	node    Node
	group   [1]Group
	members [smallMembers]Member
	records [smallRecords]dns.RR
	as      [smallRecords]dns.A
	ips     [smallRecords][net.IPv6len]byte
}

// newSmallNode returns a node for sets (one type, at most smallMembers sets and
// smallRecords records) whose group has its members, each with its Records, but nothing
// else filled in yet.
func newSmallNode(sets []*RRSet) *Node {
	sn := &smallNode{}
	sn.node = Node{Sets: sets, groups: sn.group[:]}
	sn.group[0].Members = sn.members[:len(sets)]
	k := 0
	for i, set := range sets {
		start := k
		for _, rr := range set.rrs {
			if a, ok := rr.(*dns.A); ok && len(a.A) <= net.IPv6len {
				// A copy equal to the stored record, in this allocation: the records of a
				// set are immutable, so the copy never goes stale.
				sn.as[k] = *a
				sn.as[k].A = append(sn.ips[k][:0], a.A...)
				rr = &sn.as[k]
			}
			sn.records[k] = rr
			k++
		}
		sn.members[i].Records = sn.records[start:k:k]
	}
	return &sn.node
}

// internType spells a record type the way dns.TypeToString does, so that the DNS server's
// comparisons with the query's type (taken from the same map) hit on pointer equality.
func internType(t string) string {
	if c, ok := dns.TypeToString[dns.StringToType[t]]; ok && c == t {
		return c
	}
	return t
}

// internOwner makes each record owned by name (as spelled in the store) share name's bytes,
// so that comparing a record's owner with the name the store indexed reads memory the
// look-up has just read.
func internOwner(rrs []dns.RR, name string) {
	for _, rr := range rrs {
		if h := rr.Header(); h.Name == name {
			h.Name = name
		}
	}
}

// isCut reports whether a set is a zone cut: an NS set strictly below the zone's apex.
func (zs *zoneState) isCut(k setKey) bool {
	return k.typ == "NS" && k.name != zs.Name
}
