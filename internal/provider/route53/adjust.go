package route53

import (
	"cmp"
	"strconv"

	"github.com/crossfade-io/crossfade/internal/elbzone"
	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// AdjustEndpoints rewrites desired endpoints into the form Route 53 stores, so that the
// planner compares like with like, and into the form external-dns v0.21's AWS provider
// gives them, so that a zone it wrote is adopted without a change and one crossfade wrote
// is handed back without one:
//
//   - A CNAME marked alias (the `alias` annotation on a source that yields a hostname)
//     becomes an alias A record. So does an unmarked CNAME whose one target is an AWS load
//     balancer (elbzone knows its canonical zone), as external-dns does unless
//     --aws-prefer-cname (Config.PreferCNAME); `alias: "false"` keeps it a CNAME.
//   - A CNAME marked alias "A" or "AAAA" (external-dns v0.23's alias of one type, from a
//     DNSEndpoint) becomes an alias of that type alone, with no alias of the other type
//     beside it, whatever its target, and its mark becomes "true" as Route 53 reads it
//     back (external-dns v0.23's AliasNormalizingMiddleware does the same).
//   - An alias A made from a CNAME to an AWS load balancer gets an alias AAAA beside it,
//     same target and properties, as external-dns v0.21 writes it (its pull request 5111):
//     Route 53 accepts an AAAA alias to any load balancer, and for an IPv4-only one it
//     answers AAAA queries with no address, so a dual-stack load balancer is reachable over
//     IPv6 and nothing changes for the others.
//     Unlike external-dns, an alias to any other target (a name in a hosted zone) gets no
//     AAAA: Route 53 refuses an AAAA alias to a name that has no AAAA set, and that
//     refusal would take the A down with it in the same batch. A source that wants the
//     AAAA there asks for it, and no AAAA is added where the source already states one.
//   - The alias's hosted zone is filled in when it is written (toRecordSet): an AWS load
//     balancer's canonical zone for its region and type, else the known zone holding the
//     target.
//   - An alias has no TTL of its own; a configured one (endpoint.TTLZero too) is dropped.
//   - On a record that is not an alias, alias-only properties are dropped.
//
// The input is not modified; adjusted endpoints are copies.
func (p *Provider) AdjustEndpoints(desired []*endpoint.Endpoint) []*endpoint.Endpoint {
	out := make([]*endpoint.Endpoint, 0, len(desired))
	var aaaa []*endpoint.Endpoint
	for _, e := range desired {
		a, dual := adjust(e, p.cfg.PreferCNAME)
		out = append(out, a)
		if dual {
			c := a.Clone()
			c.Type = endpoint.TypeAAAA
			aaaa = append(aaaa, c)
		}
	}
	if len(aaaa) == 0 {
		return out
	}
	// An AAAA goes in only where no source states that name and type already.
	stated := make(map[endpoint.Key]bool, len(out))
	for _, e := range out {
		stated[e.Key()] = true
	}
	for _, c := range aaaa {
		if !stated[c.Key()] {
			stated[c.Key()] = true
			out = append(out, c)
		}
	}
	return out
}

// adjust returns e as Route 53 stores it (a copy when anything changes) and whether an
// alias AAAA to the same load balancer goes beside it.
func adjust(e *endpoint.Endpoint, preferCNAME bool) (_ *endpoint.Endpoint, dual bool) {
	v, marked := e.Prop(endpoint.PropAlias)
	alias, _ := strconv.ParseBool(v)
	if e.Type == endpoint.TypeCNAME && !marked && !preferCNAME && toLoadBalancer(e) {
		alias = true
	}
	// only is the one alias type asked for; "" for both (an alias to a load balancer) or A.
	var only string
	if e.Type == endpoint.TypeCNAME && (v == endpoint.AliasOnlyA || v == endpoint.AliasOnlyAAAA) {
		alias, only = true, v
	}
	switch {
	case alias && e.Type == endpoint.TypeCNAME:
		c := e.Clone()
		c.Type, c.TTL = cmp.Or(only, endpoint.TypeA), 0
		if !marked || only != "" {
			c.SetProp(endpoint.PropAlias, "true")
		}
		return c, only == "" && toLoadBalancer(e)
	case alias && e.IsAlias():
		if !e.TTL.IsConfigured() {
			return e, false
		}
		c := e.Clone()
		c.TTL = 0
		return c, false
	case !alias && (marked || hasProp(e, endpoint.PropEvaluateTargetHealth) || hasProp(e, endpoint.PropAliasZoneID)):
		c := e.Clone()
		delete(c.ProviderSpecific, endpoint.PropAlias)
		delete(c.ProviderSpecific, endpoint.PropEvaluateTargetHealth)
		delete(c.ProviderSpecific, endpoint.PropAliasZoneID)
		return c, false
	}
	return e, false
}

// toLoadBalancer reports whether e has exactly one target and it is an AWS load balancer's
// DNS name (dualstack. prefix included). external-dns looks at the first target only; an
// alias can hold one, so a CNAME with several stays what it is.
func toLoadBalancer(e *endpoint.Endpoint) bool {
	if len(e.Targets) != 1 {
		return false
	}
	_, ok := elbzone.ZoneFor(e.Targets[0])
	return ok
}

func hasProp(e *endpoint.Endpoint, k string) bool {
	_, ok := e.ProviderSpecific[k]
	return ok
}
