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
	// skipped says which members a partial read left out, and why.
	skipped []string
}

// weights returns set identifier → weight as the zone holds it. Every record of a plan
// moves together (differingWeights refuses a start where they do not), so the first
// record's members speak for all.
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

// readOpts say how strict readLive is.
type readOpts struct {
	// partial skips members that are missing or cannot be moved, instead of refusing:
	// a rollback or a release does what it still can.
	partial bool
}

// readLive reads the plan's members from the zone and checks that the cutover can move
// them: each record has a weighted member for from and to, each member is owned, and no
// other cutover holds the weights of its names.
func readLive(ctx context.Context, dns DNS, reg *registry.TXT, p *spec.Plan, o readOpts) (*live, error) {
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
			problem := ""
			switch {
			case ep == nil:
				problem = fmt.Sprintf("%s: no such record set in zone %s: the member must be published before a cutover moves it", key, zone.Name)
			case ep.Policy.Kind != endpoint.Weighted:
				problem = fmt.Sprintf("%s: is %s, not weighted", key, ep.Policy)
			case ep.Owner() == "":
				problem = fmt.Sprintf("%s: has no ownership TXT record: crossfade only moves weights of published, owned members", key)
			}
			if problem != "" {
				if o.partial {
					l.skipped = append(l.skipped, problem)
				} else {
					problems = append(problems, problem)
				}
				continue
			}
			m := member{record: r, setID: id, ep: ep}
			for _, want := range reg.For(ep) {
				if t := txts[want.Key()]; t != nil && t.Policy.Kind == endpoint.Weighted {
					m.txt = append(m.txt, t)
				}
			}
			l.members = append(l.members, m)
			l.maxTTL = max(l.maxTTL, memberTTL(ep))
		}
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
		cur := txts[want.Key()]
		// One authority per weight (safety rule 3): another cutover's record is never
		// taken over, by a run, a rollback or a release.
		for k, holder := range registry.Authorities(slices.DeleteFunc([]*endpoint.Endpoint{cur}, func(e *endpoint.Endpoint) bool { return e == nil })) {
			if holder != p.Name {
				problems = append(problems, fmt.Sprintf("%s %s: its weights are held by cutover %s (record %s): finish or release that cutover first", k.Name, k.Type, holder, want.Name))
				break
			}
		}
		l.authority = append(l.authority, want)
		l.current = append(l.current, cur)
	}
	if len(problems) > 0 {
		return nil, &NotReadyError{Problems: problems}
	}
	return l, nil
}

// differingWeights lists the set identifiers whose members carry different weights on
// different records: a cutover moves all its records together from one starting point.
func (l *live) differingWeights() []string {
	seen := map[string]*member{}
	var out []string
	for i := range l.members {
		m := &l.members[i]
		first, ok := seen[m.setID]
		if !ok {
			seen[m.setID] = m
			continue
		}
		if first.ep.Policy.Weight != m.ep.Policy.Weight {
			out = append(out, fmt.Sprintf("%s has weight %d but %s has %d: a cutover starts from one weight per member; make them equal first",
				first.ep.Key(), first.ep.Policy.Weight, m.ep.Key(), m.ep.Policy.Weight))
		}
	}
	return out
}

// memberTTL is the TTL resolvers get for e.
func memberTTL(e *endpoint.Endpoint) int64 {
	if !e.TTL.IsConfigured() {
		return defaultTTL
	}
	return int64(e.TTL)
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

// batch is the one batch that sets every member to w (set identifier → weight; nil
// leaves weights) and, when ttl > 0, to that TTL, with their ownership records; members
// already so are left out. Every batch carries the authority records: from the first
// write on no publisher reverts what the cutover wrote, and every batch, even one redone
// after a crash whose weights had already landed, has a change of its own to follow to
// INSYNC (Route 53 applies a zone's changes in order, so its INSYNC covers the earlier).
func (l *live) batch(w map[string]int64, ttl int64) plan.Batch {
	var b plan.Batch
	for _, a := range l.authority {
		b = append(b, plan.Change{Action: plan.Upsert, Endpoint: a})
	}
	for _, m := range l.members {
		want, ok := w[m.setID]
		if !ok {
			want = m.ep.Policy.Weight
		}
		wantTTL := m.ep.TTL
		if ttl > 0 {
			wantTTL = endpoint.TTL(ttl)
		}
		if m.ep.Policy.Weight == want && m.ep.TTL == wantTTL {
			continue
		}
		e := withWeight(m.ep, want)
		e.TTL = wantTTL
		b = append(b, plan.Change{Action: plan.Upsert, Endpoint: e})
		for _, t := range m.txt {
			b = append(b, plan.Change{Action: plan.Upsert, Endpoint: withWeight(t, want)})
		}
	}
	return b
}

// after returns the zone as it will be once b is applied: for `cutover plan`, which
// renders each batch against what the ones before it leave.
func (l *live) after(b plan.Batch) *live {
	n := *l
	n.members = slices.Clone(l.members)
	n.current = slices.Clone(l.authority)
	for _, c := range b {
		for i := range n.members {
			m := &n.members[i]
			if c.Endpoint.Key() == m.ep.Key() {
				m.ep = c.Endpoint
				n.maxTTL = 0
			}
			for j, t := range m.txt {
				if c.Endpoint.Key() == t.Key() {
					m.txt = slices.Clone(m.txt)
					m.txt[j] = c.Endpoint
				}
			}
		}
	}
	if n.maxTTL == 0 {
		for _, m := range n.members {
			n.maxTTL = max(n.maxTTL, memberTTL(m.ep))
		}
	}
	return &n
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

// FormatWeights renders "blue=90 green=10" in set identifier order.
func FormatWeights(w map[string]int64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(w)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, w[k]))
	}
	return strings.Join(parts, " ")
}
