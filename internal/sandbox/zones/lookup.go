package zones

import (
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// Answer is what the store knows about one query name.
type Answer struct {
	// ZoneID and Apex name the authoritative zone.
	ZoneID string
	Apex   string
	// Node holds the sets at the name, or at the wildcard that matched it; nil if none.
	Node *Node
	// Exists is false for NXDOMAIN: no records at the name, below it, or by wildcard.
	Exists bool
	// SOA is the zone's SOA set, for the authority section of negative answers.
	SOA *RRSet
	// HasCuts reports that the zone has an NS set below its apex: only then can the name
	// lie at or below a zone cut.
	HasCuts bool
}

// Lookup finds the zone authoritative for qname (a canonical, lower-case, absolute name)
// and the sets at that name. ok is false when no zone of the sandbox contains the name.
// When several zones have the same apex, the oldest one answers.
func (s *Store) Lookup(qname string) (a Answer, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	zs := s.closestZone(qname)
	if zs == nil {
		return Answer{}, false
	}
	a = Answer{ZoneID: zs.ID, Apex: zs.Name, SOA: zs.soa, HasCuts: zs.cuts > 0}
	if n := zs.nodes[qname]; n != nil {
		a.Node, a.Exists = n, true
		return a, true
	}
	if qname == zs.Name || zs.ents[qname] > 0 {
		a.Exists = true
		return a, true
	}
	// RFC 4592: the closest encloser's wildcard answers for a name that does not exist.
	for off, end := dns.NextLabel(qname, 0); !end; off, end = dns.NextLabel(qname, off) {
		anc := qname[off:]
		if len(anc) < len(zs.Name) {
			break
		}
		if anc == zs.Name || zs.nodes[anc] != nil || zs.ents[anc] > 0 {
			if w := zs.nodes["*."+anc]; w != nil {
				a.Node, a.Exists = w, true
			}
			break
		}
	}
	return a, true
}

// LookupIn returns the sets at name inside one zone, for alias targets. For the canonical
// zone of an AWS load balancer it returns the addresses the sandbox was given for the load
// balancer named, as A and AAAA sets (see SetLoadBalancer).
func (s *Store) LookupIn(zoneID, name string) *Node {
	s.mu.RLock()
	defer s.mu.RUnlock()
	zs := s.zones[zoneID]
	if zs == nil {
		return s.loadBalancerNode(zoneID, name)
	}
	return zs.nodes[name]
}

func (s *Store) closestZone(qname string) *zoneState {
	for off, end := 0, false; !end; off, end = dns.NextLabel(qname, off) {
		if zs := s.byName[qname[off:]]; len(zs) > 0 {
			return zs[0]
		}
	}
	if zs := s.byName["."]; len(zs) > 0 {
		return zs[0]
	}
	return nil
}

// Page is one page of ListResourceRecordSets.
type Page struct {
	Sets []*RRSet
	// Next is the first set of the following page, nil on the last page.
	Next *RRSet
}

// ListRecords returns up to max sets in Route 53's order, starting at the first set whose
// (name, type, set identifier) is not before the given start. An empty startType compares by
// name only; an empty startID by name and type.
func (s *Store) ListRecords(zoneID, startName, startType, startID string, max int) (Page, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	zs, ok := s.zones[zoneID]
	if !ok {
		return Page{}, noSuchZone(zoneID)
	}
	sorted := zs.listing()
	i := 0
	if startName != "" {
		start := reverseKey(CanonicalName(startName))
		i, _ = slices.BinarySearchFunc(sorted, struct{}{}, func(set *RRSet, _ struct{}) int {
			if c := strings.Compare(reverseKey(set.Name), start); c != 0 || startType == "" {
				return c
			}
			if c := strings.Compare(set.Type, startType); c != 0 || startID == "" {
				return c
			}
			return strings.Compare(set.SetIdentifier, startID)
		})
	}
	end := min(i+max, len(sorted))
	p := Page{Sets: slices.Clone(sorted[i:end])}
	if end < len(sorted) {
		p.Next = sorted[end]
	}
	return p, nil
}

// listing returns the zone's sets in Route 53's order, rebuilding the cache after a change.
func (zs *zoneState) listing() []*RRSet {
	zs.sortMu.Lock()
	defer zs.sortMu.Unlock()
	if zs.sorted != nil {
		return zs.sorted
	}
	type keyed struct {
		key string
		set *RRSet
	}
	all := make([]keyed, 0, len(zs.sets))
	for _, set := range zs.sets {
		all = append(all, keyed{reverseKey(set.Name), set})
	}
	slices.SortFunc(all, func(a, b keyed) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		return compareInNode(a.set, b.set)
	})
	zs.sorted = make([]*RRSet, len(all))
	for i, k := range all {
		zs.sorted[i] = k.set
	}
	return zs.sorted
}
