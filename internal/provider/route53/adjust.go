package route53

import (
	"strconv"

	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// AdjustEndpoints rewrites desired endpoints into the form Route 53 stores, so that the
// planner compares like with like:
//
//   - A CNAME marked alias (the `alias` annotation on a source that yields a hostname)
//     becomes an alias A record, as external-dns's AWS provider writes it. Unlike
//     external-dns, no AAAA alias is added beside it: Route 53 refuses an AAAA alias to a
//     name in the zone that has no AAAA set, and that refusal would take the A down with
//     it in the same batch. A source that wants AAAA asks for it. The alias's hosted zone
//     is filled in when it is written (toRecordSet): an AWS load balancer's canonical zone
//     for its region and type, else the known zone holding the target.
//   - An alias has no TTL of its own; a configured one (endpoint.TTLZero too) is dropped.
//   - On a record that is not an alias, alias-only properties are dropped.
//
// The input is not modified; adjusted endpoints are copies.
func (p *Provider) AdjustEndpoints(desired []*endpoint.Endpoint) []*endpoint.Endpoint {
	out := make([]*endpoint.Endpoint, len(desired))
	for i, e := range desired {
		out[i] = adjust(e)
	}
	return out
}

func adjust(e *endpoint.Endpoint) *endpoint.Endpoint {
	v, marked := e.Prop(endpoint.PropAlias)
	alias, _ := strconv.ParseBool(v)
	switch {
	case alias && e.Type == endpoint.TypeCNAME:
		c := e.Clone()
		c.Type, c.TTL = endpoint.TypeA, 0
		return c
	case alias && e.IsAlias():
		if !e.TTL.IsConfigured() {
			return e
		}
		c := e.Clone()
		c.TTL = 0
		return c
	case !alias && (marked || hasProp(e, endpoint.PropEvaluateTargetHealth) || hasProp(e, endpoint.PropAliasZoneID)):
		c := e.Clone()
		delete(c.ProviderSpecific, endpoint.PropAlias)
		delete(c.ProviderSpecific, endpoint.PropEvaluateTargetHealth)
		delete(c.ProviderSpecific, endpoint.PropAliasZoneID)
		return c
	}
	return e
}

func hasProp(e *endpoint.Endpoint, k string) bool {
	_, ok := e.ProviderSpecific[k]
	return ok
}
