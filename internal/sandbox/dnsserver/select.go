package dnsserver

import (
	"math/rand/v2"

	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// maxStackGroup is how many sets pickWeighted tracks without allocating; the store allows
// zones.MaxWeightedSets (100) in a group.
const maxStackGroup = 128

// choose returns the member of g that answers this query: settled by the group for most
// groups, with one random draw for a weighted group whose members have no health to
// evaluate, and by pick's rules on every query where health decides.
func (r *resolver) choose(g *zones.Group, depth int) *zones.Member {
	switch g.Choice {
	case zones.ChooseFirst:
		return &g.Members[0]
	case zones.ChooseWeighted:
		return drawWeighted(g)
	}
	set := r.pick(g.Sets, depth)
	for i := range g.Members {
		if g.Members[i].Set == set {
			return &g.Members[i]
		}
	}
	return nil
}

// drawWeighted chooses a member with probability weight/Total, uniformly when every weight is
// 0: what pickWeighted does when every member is healthy.
func drawWeighted(g *zones.Group) *zones.Member {
	if g.Total == 0 {
		return &g.Members[rand.IntN(len(g.Members))]
	}
	n := rand.Uint64N(g.Total)
	for i := range g.Members {
		if n < g.Members[i].Cum {
			return &g.Members[i]
		}
	}
	return &g.Members[len(g.Members)-1] // unreachable: the last Cum is Total
}

// pick applies a group's routing policy and returns the one set to answer with, nil for an
// empty group. Every set of a group has the same policy: the store rejects mixed groups.
func (r *resolver) pick(g []*zones.RRSet, depth int) *zones.RRSet {
	switch {
	case len(g) == 0:
		return nil
	case len(g) == 1:
		// Simple, or a lone weighted or failover set: with every set unhealthy Route 53
		// answers as if all were healthy, so a lone set is the answer whatever its health.
		return g[0]
	}
	switch g[0].Policy() {
	case "weighted":
		return r.pickWeighted(g, depth)
	case "failover":
		return r.pickFailover(g, depth)
	default:
		return g[0]
	}
}

// pickWeighted chooses one set with probability weight/sum among the healthy sets with a
// non-zero weight; if there are none, uniformly among the healthy 0-weight sets. When no set
// is healthy Route 53 treats them all as healthy, so the same rules apply to the whole group.
func (r *resolver) pickWeighted(g []*zones.RRSet, depth int) *zones.RRSet {
	var stack [maxStackGroup]bool
	healthy := stack[:0]
	if len(g) > len(stack) {
		healthy = make([]bool, 0, len(g))
	}
	var sum, sumAll uint64
	zeros, zerosAll := 0, 0
	for _, set := range g {
		w := weight(set)
		h := r.healthy(set, depth)
		healthy = append(healthy, h)
		sumAll += w
		if w == 0 {
			zerosAll++
		}
		if h {
			sum += w
			if w == 0 {
				zeros++
			}
		}
	}
	all := sum == 0 && zeros == 0
	if all {
		sum, zeros = sumAll, zerosAll
	}
	if sum > 0 {
		n := rand.Uint64N(sum)
		for i, set := range g {
			if !all && !healthy[i] {
				continue
			}
			w := weight(set)
			if n < w {
				return set
			}
			n -= w
		}
	}
	if zeros == 0 {
		return g[0] // only if weights overflowed the sum; the store caps them at 255
	}
	k := rand.IntN(zeros)
	for i, set := range g {
		if (all || healthy[i]) && weight(set) == 0 {
			if k == 0 {
				return set
			}
			k--
		}
	}
	return g[0] // unreachable: the counts above match the loops
}

// weight is a set's weight; a missing or negative one (which the store rejects) counts as 0.
func weight(set *zones.RRSet) uint64 {
	if set.Weight == nil || *set.Weight < 0 {
		return 0
	}
	return uint64(*set.Weight)
}

// pickFailover answers with the primary while it is healthy, else with a healthy secondary,
// else with the primary again: Route 53 answers as if healthy when every set is unhealthy.
func (r *resolver) pickFailover(g []*zones.RRSet, depth int) *zones.RRSet {
	var primary, secondary *zones.RRSet
	for _, set := range g {
		switch set.Failover {
		case zones.Primary:
			primary = set
		case zones.Secondary:
			secondary = set
		}
	}
	switch {
	case primary != nil && r.healthy(primary, depth):
		return primary
	case secondary != nil && r.healthy(secondary, depth):
		return secondary
	case primary != nil:
		return primary
	case secondary != nil:
		return secondary
	default:
		return g[0]
	}
}

// healthy reports whether a set may be answered: its health check (if any) passes and, for
// an alias that evaluates target health, its target has a healthy answer.
func (r *resolver) healthy(set *zones.RRSet, depth int) bool {
	if !r.recs.Healthy(set.HealthCheckID) {
		return false
	}
	a := set.Alias
	if a == nil || !a.EvaluateTargetHealth {
		return true
	}
	return r.targetHealthy(r.recs.LookupIn(a.HostedZoneID, a.DNSName), set.Type, depth+1)
}

// targetHealthy reports whether an alias target has a healthy answer of type typ: at least
// one set of the group the target would answer with is healthy. A missing target, a chain
// deeper than maxHops or a spent budget counts as unhealthy.
func (r *resolver) targetHealthy(n *zones.Node, typ string, depth int) bool {
	if depth > maxHops {
		return false
	}
	g := group(n, typ)
	if len(g) == 0 && typ != "CNAME" {
		g = group(n, "CNAME")
	}
	for _, set := range g {
		if r.budget <= 0 {
			return false
		}
		r.budget--
		if r.healthy(set, depth) {
			return true
		}
	}
	return false
}
