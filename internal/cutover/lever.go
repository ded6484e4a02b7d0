package cutover

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// DNS is what the cutover needs of a DNS provider: read a zone, write one batch and
// follow it to INSYNC. The Route 53 provider implements it.
type DNS interface {
	Zones(ctx context.Context) ([]provider.Zone, error)
	Records(ctx context.Context, zone provider.Zone) ([]*endpoint.Endpoint, error)
	ApplyChange(ctx context.Context, zone provider.Zone, batch plan.Batch, comment string) (string, error)
	InSync(ctx context.Context, changeID string) (bool, error)
	DryRun(ctx context.Context, zone provider.Zone, batch plan.Batch) ([]byte, error)
}

// member is one weighted record set a cutover moves, with its ownership TXT records.
type member struct {
	record spec.Record
	setID  string
	ep     *endpoint.Endpoint
	// txt are the ownership records of this member that carry its weight, kept in step
	// so that a publisher re-reading them sees the weight the cutover wrote.
	txt []*endpoint.Endpoint
}

// live is the part of the zone a cutover touches, as read at one moment.
type live struct {
	zone    provider.Zone
	members []member
	// maxTTL is the largest TTL among the members: the least time a step must hold.
	maxTTL int64
	// authority are the records by which this cutover holds the weights, one per name,
	// as they should be; current holds those the zone has (nil where missing).
	authority, current []*endpoint.Endpoint
}

// weights returns set identifier → weight as the zone holds it. Every record of a plan
// moves together, so the first record's members speak for all.
func (l *live) weights() map[string]int64 {
	out := map[string]int64{}
	for _, m := range l.members {
		if _, ok := out[m.setID]; !ok {
			out[m.setID] = m.ep.Policy.Weight
		}
	}
	return out
}

// findZone picks the plan's zone among the provider's.
func findZone(ctx context.Context, dns DNS, p *spec.Plan) (provider.Zone, error) {
	zones, err := dns.Zones(ctx)
	if err != nil {
		return provider.Zone{}, fmt.Errorf("list zones: %w", err)
	}
	var found []provider.Zone
	for _, z := range zones {
		if (p.ZoneID == "" || strings.TrimPrefix(p.ZoneID, "/hostedzone/") == z.ID) && (p.Zone == "" || endpoint.NormalizeName(p.Zone) == z.Name) {
			found = append(found, z)
		}
	}
	switch len(found) {
	case 0:
		return provider.Zone{}, fmt.Errorf("zone %s%s: not found among the %d zones the provider manages", p.Zone, p.ZoneID, len(zones))
	case 1:
		return found[0], nil
	}
	return provider.Zone{}, fmt.Errorf("zone %s: %d zones have this name: set spec.zoneID", p.Zone, len(found))
}

// readLive reads the plan's members from the zone and checks that the cutover can move
// them: each record has a weighted member for from and to, and each member is owned.
func readLive(ctx context.Context, dns DNS, reg *registry.TXT, p *spec.Plan) (*live, error) {
	zone, err := findZone(ctx, dns, p)
	if err != nil {
		return nil, err
	}
	recs, err := dns.Records(ctx, zone)
	if err != nil {
		return nil, fmt.Errorf("zone %s: %w", zone, err)
	}
	z := reg.Read(recs)
	txts := map[endpoint.Key]*endpoint.Endpoint{}
	for _, e := range recs {
		if e.Type == endpoint.TypeTXT {
			txts[e.Key()] = e
		}
	}
	l := &live{zone: zone}
	var problems []string
	for _, r := range p.Records {
		for _, id := range []string{p.From, p.To} {
			key := endpoint.Key{Name: r.Name, Type: r.Type, SetIdentifier: id}
			var ep *endpoint.Endpoint
			for _, e := range z.Records {
				if e.Key() == key {
					ep = e
					break
				}
			}
			switch {
			case ep == nil:
				problems = append(problems, fmt.Sprintf("%s: no such record set in zone %s: the member must be published before a cutover moves it", key, zone.Name))
				continue
			case ep.Policy.Kind != endpoint.Weighted:
				problems = append(problems, fmt.Sprintf("%s: is %s, not weighted", key, ep.Policy))
				continue
			case ep.Owner() == "":
				problems = append(problems, fmt.Sprintf("%s: has no ownership TXT record: crossfade only moves weights of published, owned members", key))
				continue
			}
			m := member{record: r, setID: id, ep: ep}
			for _, want := range reg.For(ep) {
				if t := txts[want.Key()]; t != nil && t.Policy.Kind == endpoint.Weighted {
					m.txt = append(m.txt, t)
				}
			}
			l.members = append(l.members, m)
			ttl := int64(ep.TTL)
			if !ep.TTL.IsConfigured() {
				ttl = defaultTTL
			}
			l.maxTTL = max(l.maxTTL, ttl)
		}
	}
	if len(problems) > 0 {
		return nil, &NotReadyError{Problems: problems}
	}
	types := map[string][]string{}
	var names []string
	for _, r := range p.Records {
		if types[r.Name] == nil {
			names = append(names, r.Name)
		}
		types[r.Name] = append(types[r.Name], r.Type)
	}
	for _, n := range names {
		want := registry.AuthorityRecord(n, types[n], p.Name)
		l.authority = append(l.authority, want)
		l.current = append(l.current, txts[want.Key()])
	}
	return l, nil
}

// defaultTTL is what Route 53 records written without a TTL get (crossfade writes 300).
const defaultTTL = 300

// NotReadyError lists why the zone does not hold what the plan moves.
type NotReadyError struct {
	Problems []string
}

// Error lists the problems, one per line.
func (e *NotReadyError) Error() string {
	return "the zone is not ready for this cutover:\n  " + strings.Join(e.Problems, "\n  ")
}

// weightBatch is the one batch that sets every member to w (set identifier → weight),
// with its ownership records; members already at their weight are left out. The first
// batch also writes the authority records, so that from the first weight change on no
// publisher reverts a weight the cutover wrote.
func (l *live) weightBatch(w map[string]int64) plan.Batch {
	var b plan.Batch
	for i, a := range l.authority {
		if cur := l.current[i]; cur == nil || !cur.Targets.Same(a.Targets) {
			b = append(b, plan.Change{Action: plan.Upsert, Endpoint: a})
		}
	}
	for _, m := range l.members {
		want, ok := w[m.setID]
		if !ok || m.ep.Policy.Weight == want {
			continue
		}
		b = append(b, plan.Change{Action: plan.Upsert, Endpoint: withWeight(m.ep, want)})
		for _, t := range m.txt {
			b = append(b, plan.Change{Action: plan.Upsert, Endpoint: withWeight(t, want)})
		}
	}
	return b
}

// ttlBatch sets every member's TTL to ttl.
func (l *live) ttlBatch(ttl int64) plan.Batch {
	var b plan.Batch
	for _, m := range l.members {
		if int64(m.ep.TTL) == ttl {
			continue
		}
		e := m.ep.Clone()
		e.TTL = endpoint.TTL(ttl)
		b = append(b, plan.Change{Action: plan.Upsert, Endpoint: e})
	}
	return b
}

func withWeight(e *endpoint.Endpoint, w int64) *endpoint.Endpoint {
	c := e.Clone()
	c.Policy = endpoint.WeightedPolicy(w)
	return c
}

// targets returns, per record, set identifier → the member's values, for the DNS gate.
func (l *live) targets() map[spec.Record]map[string][]string {
	out := map[spec.Record]map[string][]string{}
	for _, m := range l.members {
		if out[m.record] == nil {
			out[m.record] = map[string][]string{}
		}
		out[m.record][m.setID] = slices.Clone(m.ep.Targets)
	}
	return out
}

// formatWeights renders "blue=90 green=10" in set identifier order.
func formatWeights(w map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, w[k]))
	}
	return strings.Join(parts, " ")
}
