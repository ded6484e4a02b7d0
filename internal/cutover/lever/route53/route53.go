// Package route53 is the Route 53 lever of a cutover: the weights of a plan's weighted
// record sets, written in one compare-and-swap change batch per step (see the comment
// below the imports).
package route53

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/elbzone"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// The Route 53 lever: the weights of the plan's weighted record sets, their members'
// ownership records kept in step, the cutover's authority records, one change batch per
// write (a compare-and-swap of every set it rewrites), followed to INSYNC; a step holds
// for at least the records' TTL.

// DNS is what the cutover needs of a DNS provider: read a zone, write one batch and
// follow it to INSYNC. The Route 53 provider implements it.
type DNS interface {
	Zones(ctx context.Context) ([]provider.Zone, error)
	Records(ctx context.Context, zone provider.Zone) ([]*endpoint.Endpoint, error)
	ApplyChange(ctx context.Context, zone provider.Zone, batch changes.Batch, comment string) (string, error)
	InSync(ctx context.Context, changeID string) (bool, error)
	DryRun(ctx context.Context, zone provider.Zone, batch changes.Batch) ([]byte, error)
}

// member is one weighted record set a cutover writes, with its ownership TXT records.
type member struct {
	record spec.Record
	setID  string
	ep     *endpoint.Endpoint
	// txt are the ownership records of this member that carry its weight, kept in step
	// so that a publisher re-reading them sees the weight the cutover wrote (another
	// cluster's are read, for release, never written).
	txt []*endpoint.Endpoint
	// target is, for an alias, what its answers carry: its target's TTL and values.
	target aliasTarget
}

// aliasTarget is what an alias member's answers carry, as Route 53 answers an alias: its
// target's records, with the target's TTL.
type aliasTarget struct {
	// ttl is the TTL resolvers get for the alias's answers; why says where it comes
	// from. why is "" until read (a member that is no alias, or one built in a test):
	// such an alias counts with defaultTTL.
	ttl int64
	why string
	// values are the target's own values, for a target in the zone: what the DNS gate
	// attributes the alias's answers by. nil for a target elsewhere (a load balancer):
	// the gate resolves the alias's value, the target's name, when it checks.
	values []string
	// unknown is set when ttl is not the target's but defaultTTL, counted for want of it.
	unknown bool
}

// live is the part of the zone a cutover touches, as read at one moment.
type live struct {
	zone provider.Zone
	// members are the from and to members of every record: the sets whose weights move.
	members []member
	// others are the other weighted sets of each record's name and type (a third
	// cluster's). Their weights are never written, but Route 53 gives every weighted set
	// of a name and type one TTL, so a TTL change moves them with the members.
	others []member
	// maxTTL is the largest TTL among the members and others: the least time a step must
	// hold.
	maxTTL int64
	// groupTTL is, per record, the TTL its weighted sets share (the largest, should a
	// zone hold several); records whose sets are all aliases, which have no TTL, have none.
	groupTTL map[spec.Record]int64
	// authority are the records by which this cutover holds the weights, one per name,
	// as they should be; current holds those the zone has (nil where missing).
	authority, current []*endpoint.Endpoint
	// authorityOf is, for each authority record, the name whose weights it holds.
	authorityOf []string
	// takenOver are the runners whose authority records of this cutover the next batch
	// replaces: an abort or a forced release taking the weights over, never a run.
	takenOver []registry.Runner
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

// AliasTTL is the longest TTL the plan's alias members' targets answer with (0: no alias
// member): no write lowers it, so it bounds every hold whatever spec.ttl.lower says.
func (l *live) AliasTTL() int64 {
	var t int64
	for _, m := range l.members {
		if m.ep.IsAlias() {
			t = max(t, m.effectiveTTL())
		}
	}
	return t
}

// measure sets maxTTL and groupTTL from the members and others. A member that is an
// alias counts with its target's TTL, which its answers carry (effectiveTTL); another
// cluster's alias is left out: its weight does not move, so an answer of it a resolver
// holds sends no traffic where the step did not mean it to, and it has no TTL to change.
func (l *live) measure() {
	l.maxTTL, l.groupTTL = 0, map[spec.Record]int64{}
	for _, m := range l.members {
		l.maxTTL = max(l.maxTTL, m.effectiveTTL())
		if !m.ep.IsAlias() {
			l.groupTTL[m.record] = max(l.groupTTL[m.record], memberTTL(m.ep))
		}
	}
	for _, o := range l.others {
		if !o.ep.IsAlias() {
			l.maxTTL = max(l.maxTTL, memberTTL(o.ep))
			l.groupTTL[o.record] = max(l.groupTTL[o.record], memberTTL(o.ep))
		}
	}
}

// findZone picks the plan's zone among the provider's.
func findZone(ctx context.Context, dns DNS, p *spec.Plan) (provider.Zone, error) {
	zones, err := dns.Zones(ctx)
	if err != nil {
		return provider.Zone{}, fmt.Errorf("list zones: %w", err)
	}
	z, err := provider.FindZone(zones, p.Zone, p.ZoneID)
	var le *provider.ZoneLookupError
	if errors.As(err, &le) && len(le.Matches) > 1 {
		return provider.Zone{}, fmt.Errorf("zone %s: %d zones have this name: set spec.zoneID", p.Zone, len(le.Matches))
	}
	return z, err
}

// readLive reads the plan's members from the zone and checks that the cutover can move
// them: each record has a weighted member for from and to, each member is owned, and no
// other cutover, nor another runner of this one, holds the weights of its names.
func readLive(ctx context.Context, dns DNS, reg *registry.TXT, p *spec.Plan, o lever.ReadOptions) (*live, error) {
	zone, err := findZone(ctx, dns, p)
	if err != nil {
		return nil, &lever.ReadError{Err: err}
	}
	return readZone(ctx, dns, reg, p, zone, o)
}

// readZone is readLive in zone, found: p's records are all in it.
func readZone(ctx context.Context, dns DNS, reg *registry.TXT, p *spec.Plan, zone provider.Zone, o lever.ReadOptions) (*live, error) {
	recs, err := dns.Records(ctx, zone)
	if err != nil {
		return nil, &lever.ReadError{Err: fmt.Errorf("zone %s: %w", zone, err)}
	}
	z := reg.Read(recs)
	txts := map[endpoint.Key]*endpoint.Endpoint{}
	for _, e := range recs {
		if e.Type == endpoint.TypeTXT {
			txts[e.Key()] = e
		}
	}
	byKey := map[endpoint.Key]*endpoint.Endpoint{}
	groups := map[spec.Record][]*endpoint.Endpoint{} // every weighted set of a record's name and type
	sets := map[spec.Record][]*endpoint.Endpoint{}   // every set of a name and type, for alias targets
	for _, e := range recs {
		if e.Type != endpoint.TypeTXT {
			r := spec.Record{Name: e.Name, Type: e.Type}
			sets[r] = append(sets[r], e)
		}
	}
	for _, e := range z.Records {
		byKey[e.Key()] = e
		if e.Policy.Kind == endpoint.Weighted {
			r := spec.Record{Name: e.Name, Type: e.Type}
			groups[r] = append(groups[r], e)
		}
	}
	l := &live{zone: zone}
	var problems []string
	for _, r := range p.Records {
		for _, id := range []string{p.From, p.To} {
			key := endpoint.Key{Name: r.Name, Type: r.Type, SetIdentifier: id}
			ep := byKey[key]
			problem := ""
			switch {
			case ep == nil && (o.Held || o.Started) && !o.Partial:
				return nil, &lever.MemberGoneError{Member: key.String(), Where: "zone " + zone.Name}
			case ep == nil:
				problem = fmt.Sprintf("%s: no such record set in zone %s: the member must be published before a cutover moves it", key, zone.Name)
			case ep.Policy.Kind != endpoint.Weighted:
				problem = fmt.Sprintf("%s: is %s, not weighted", key, ep.Policy)
			case ep.Owner() == "":
				problem = fmt.Sprintf("%s: has no ownership TXT record: crossfade only moves weights of published, owned members", key)
			}
			if problem != "" {
				if o.Partial {
					l.skipped = append(l.skipped, problem)
				} else {
					problems = append(problems, problem)
				}
				continue
			}
			m := member{record: r, setID: id, ep: ep}
			if ep.IsAlias() {
				m.target = resolveAlias(ep, zone, sets, 0)
			}
			for _, want := range reg.For(ep) {
				if t := txts[want.Key()]; t != nil && t.Policy.Kind == endpoint.Weighted {
					m.txt = append(m.txt, t)
				}
			}
			l.members = append(l.members, m)
		}
		for _, e := range groups[r] {
			if e.SetIdentifier != p.From && e.SetIdentifier != p.To {
				o := member{record: r, setID: e.SetIdentifier, ep: e}
				for _, want := range reg.For(e) {
					if t := txts[want.Key()]; t != nil && t.Policy.Kind == endpoint.Weighted {
						o.txt = append(o.txt, t)
					}
				}
				l.others = append(l.others, o)
			}
		}
	}
	problems = append(problems, unlistedTwins(p, groups)...)
	l.measure()
	types := map[string][]string{}
	var names []string
	for _, r := range p.Records {
		if types[r.Name] == nil {
			names = append(names, r.Name)
		}
		types[r.Name] = append(types[r.Name], r.Type)
	}
	for _, n := range names {
		want := registry.Authority{Name: n, Cutover: p.Name, Types: types[n], Runner: o.Runner}.Record()
		cur := txts[want.Key()]
		a, isAuthority := registry.ParseAuthority(cur)
		// One authority per weight (safety rule 3): another cutover's record is never
		// taken over, by a run, a rollback or a release; another runner's of this
		// cutover only by an abort or a forced release, which say so.
		switch {
		case cur == nil && o.Held:
			return nil, fmt.Errorf("cutover %s: its authority record %s is gone: someone released the weights (cutover release --force?) while this runner held them, and it does not take them back on its own: `crossfade cutover run --resume` takes them again, `crossfade cutover abort` rolls back",
				p.Name, want.Name)
		case cur == nil:
		case !isAuthority:
			problems = append(problems, fmt.Sprintf("%s: a TXT record that is not a crossfade authority record has this name: not overwriting it", want.Name))
			continue
		case a.Cutover != p.Name:
			problems = append(problems, fmt.Sprintf("%s %s: its weights are held by cutover %s (record %s): finish or release that cutover first", n, strings.Join(types[n], ","), a.Cutover, want.Name))
			continue
		case a.Runner.Token != o.Runner.Token && !o.Takeover:
			return nil, &lever.HeldError{Cutover: p.Name, Record: want.Name, Holder: a.Runner}
		case a.Runner.Token != o.Runner.Token:
			l.takenOver = append(l.takenOver, a.Runner)
		}
		l.authority = append(l.authority, want)
		l.current = append(l.current, cur)
		l.authorityOf = append(l.authorityOf, n)
	}
	// Until the cutover holds the weights (none of its authority records is in the zone
	// yet), the weights read are the ones it would start from, and roll back to.
	if !o.Partial && !o.Held && !slices.ContainsFunc(l.current, func(c *endpoint.Endpoint) bool { return c != nil }) {
		problems = append(problems, l.evenSplits(p)...)
	}
	if len(problems) > 0 {
		return nil, &lever.NotReadyError{Problems: problems}
	}
	return l, nil
}

// evenSplit reports whether every weighted set of r would have weight 0 with the members
// at w (set identifier → weight; a member not in w keeps the weight read). Route 53
// answers such a group evenly, every set alike: a 0 does not mean "off" there.
func (l *live) evenSplit(r spec.Record, w map[string]int64) bool {
	found := false
	for _, ms := range [][]member{l.members, l.others} {
		for _, m := range ms {
			if m.record != r {
				continue
			}
			found = true
			weight, ok := w[m.setID]
			if !ok {
				weight = m.ep.Policy.Weight
			}
			if weight != 0 {
				return false
			}
		}
	}
	return found
}

// evenSplits lists why the weights read cannot start a cutover, and the plan's steps that
// would make an even split of a record: every weighted set at 0, which Route 53 answers
// evenly. A cutover starting there would hand half the traffic to the cluster it has not
// yet checked, and roll back onto that split when a gate fails; a step that writes both
// weights 0 where no other set of the record carries traffic does not take the traffic
// off both members, it splits it between them (a step of percent 50 says that plainly).
func (l *live) evenSplits(p *spec.Plan) []string {
	var out []string
	for _, r := range p.Records {
		if !l.evenSplit(r, nil) {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s: every weighted set has weight 0 (%s): Route 53 answers a group whose weights are all 0 evenly, every set alike, "+
			"so a cutover from here would start at a split nobody chose, and roll back onto it; set a start first: %s",
			r.Name, r.Type, l.recordWeights(r), l.howToStart(r, p.From)))
	}
	for i, st := range p.Steps {
		w := map[string]int64{p.From: st.Weights.From, p.To: st.Weights.To}
		if st.Weights.From != 0 || st.Weights.To != 0 {
			continue
		}
		for _, r := range p.Records {
			if l.evenSplit(r, w) {
				out = append(out, fmt.Sprintf("spec.steps[%d]: weights from 0, to 0 leave every weighted set of %s %s at 0, which Route 53 answers evenly (0 does not mean \"off\" there): "+
					"for an even split write percent: 50; to take traffic off %s, write percent: 100", i, r.Name, r.Type, p.From))
				break
			}
		}
	}
	return out
}

// recordWeights renders the weights of r's weighted sets: "blue=0 green=0".
func (l *live) recordWeights(r spec.Record) string {
	w := map[string]int64{}
	for _, ms := range [][]member{l.members, l.others} {
		for _, m := range ms {
			if m.record == r {
				w[m.setID] = m.ep.Policy.Weight
			}
		}
	}
	return lever.FormatWeights(w)
}

// howToStart says how to give the from member of r its traffic before a cutover: through
// the source its publisher reads, named by its ownership record.
func (l *live) howToStart(r spec.Record, from string) string {
	for _, m := range l.members {
		if m.record == r && m.setID == from {
			return fmt.Sprintf("%s, so that %s has all the traffic (a weight written by hand is put back by the next sync of a source that asks for 0), then plan again",
				setWeightAdvice(m.ep, 100), from)
		}
	}
	return fmt.Sprintf("publish %s's member with weight 100, so that it has all the traffic, then plan again", from)
}

// sourceOf names who publishes e: its owner and, when its ownership record says, the object.
func sourceOf(e *endpoint.Endpoint) string {
	s := "published by owner " + e.Owner()
	if r := e.Resource(); r != "" {
		s += " from " + r
	}
	return s
}

// weightAnnotation is the annotation external-dns and crossfade read a member's weight
// from (with the prefix most clusters carry; external-dns.kubernetes.io/ works alike).
const weightAnnotation = "external-dns.alpha.kubernetes.io/aws-weight"

// setWeightAdvice says how to make the source of e ask for weight w and publish it: the
// annotation of a Kubernetes object, a DNSEndpoint's providerSpecific property, or, when
// the ownership record names no object, the source of its owner.
func setWeightAdvice(e *endpoint.Endpoint, w int64) string {
	res := e.Resource()
	kind, _, _ := strings.Cut(res, "/")
	switch {
	case res == "":
		return fmt.Sprintf("set the weight of %s's source for %s to %d and sync it", e.Owner(), e.Key(), w)
	case kind == "crd":
		return fmt.Sprintf("%s: set the providerSpecific aws/weight of its endpoint %s to %d and sync it", res, e.Name, w)
	}
	return fmt.Sprintf("%s: set %s to %d and sync it", res, weightAnnotation, w)
}

// untouchable lists the weighted sets a batch setting ttls would have to rewrite but may
// not: another cluster's member that nobody owns (safety rule 1: never overwrite a record
// this owner does not own). Route 53 gives every weighted set of a name and type one TTL,
// so the TTL of the others cannot change without theirs.
func (l *live) untouchable(ttls map[spec.Record]int64) []string {
	var out []string
	for _, o := range l.others {
		t, ok := ttls[o.record]
		if !ok || o.ep.IsAlias() || o.ep.Owner() != "" || o.ep.TTL == endpoint.NewTTL(t) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: has no ownership TXT record, and lowering the TTL of %s %s to %ds rewrites every weighted set of the name and type (Route 53 gives them one TTL); "+
			"publish or adopt it with an owner, delete it, or drop spec.ttl.lower", o.ep.Key(), o.record.Name, o.record.Type, t))
	}
	return out
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
	return e.TTL.Seconds()
}

// defaultTTL is what Route 53 records written without a TTL get (crossfade writes 300).
const defaultTTL = 300

// effectiveTTL is the TTL resolvers get for m's answers: an alias's target's, a plain
// set's own.
func (m member) effectiveTTL() int64 {
	if !m.ep.IsAlias() {
		return memberTTL(m.ep)
	}
	if m.target.why == "" {
		return defaultTTL
	}
	return m.target.ttl
}

// awsAliasTTL is the TTL of the answers of the AWS resources whose TTL Route 53's alias
// answers are documented to carry: Elastic Load Balancing names ("The time-to-live (TTL)
// for an Elastic Load Balancing DNS entry is set to 60 seconds"), and CloudFront and S3
// website endpoints (the Route 53 FAQ: alias records to ELB and S3 website endpoints have
// "a fixed TTL of 60 seconds"; CloudFront's answers carry 60 s too).
const awsAliasTTL = 60

// maxAliasHops bounds the chain of aliases resolveAlias follows inside the zone, as Route
// 53 bounds it; a loop counts as a target of unknown TTL.
const maxAliasHops = 8

// aliasName is an alias's target, as written.
func aliasName(e *endpoint.Endpoint) string {
	if len(e.Targets) == 0 {
		return "(no target)"
	}
	return endpoint.NormalizeName(e.Targets[0])
}

// resolveAlias says what alias e's answers carry, as Route 53 answers an alias: for a
// load balancer, CloudFront or an S3 website endpoint, 60 s (awsAliasTTL); for a record
// set of the zone (sets: every set of the zone by name and type), that set's TTL (the
// largest of its sets', and through aliases there, their targets') and values. Another
// target's TTL is not known here: it counts with defaultTTL, as the plan says.
func resolveAlias(e *endpoint.Endpoint, zone provider.Zone, sets map[spec.Record][]*endpoint.Endpoint, depth int) aliasTarget {
	target := aliasName(e)
	zoneID, _ := e.Prop(endpoint.PropAliasZoneID)
	zoneID = strings.TrimPrefix(strings.TrimPrefix(zoneID, "/"), "hostedzone/")
	if _, lb := elbzone.ZoneFor(target); lb || elbzone.IsCanonicalZone(zoneID) {
		return aliasTarget{ttl: awsAliasTTL, why: "Elastic Load Balancing gives its names a TTL of 60s"}
	}
	if strings.HasSuffix(target, ".cloudfront.net") {
		return aliasTarget{ttl: awsAliasTTL, why: "CloudFront answers with a TTL of 60s"}
	}
	if isS3Website(target) {
		return aliasTarget{ttl: awsAliasTTL, why: "S3 website endpoints answer with a TTL of 60s"}
	}
	unknown := aliasTarget{ttl: defaultTTL, why: fmt.Sprintf("the TTL of %s is not known to crossfade: counted as %ds", target, defaultTTL), unknown: true}
	inZone := target == zone.Name || strings.HasSuffix(target, "."+zone.Name)
	if !inZone || (zoneID != "" && zoneID != zone.ID) || depth >= maxAliasHops {
		return unknown
	}
	found := sets[spec.Record{Name: target, Type: e.Type}]
	if len(found) == 0 {
		return unknown
	}
	out := aliasTarget{values: []string{}}
	for _, t := range found {
		if t.IsAlias() {
			next := resolveAlias(t, zone, sets, depth+1)
			if next.unknown {
				return unknown
			}
			if next.values == nil {
				// The chain leaves the zone (a load balancer): the gate resolves the name.
				next.values = []string{aliasName(t)}
			}
			out.ttl = max(out.ttl, next.ttl)
			out.values = append(out.values, next.values...)
			continue
		}
		out.ttl = max(out.ttl, memberTTL(t))
		out.values = append(out.values, t.Targets...)
	}
	slices.Sort(out.values)
	out.values = slices.Compact(out.values)
	out.why = fmt.Sprintf("the TTL of %s %s in zone %s, which it points to", target, e.Type, zone.Name)
	return out
}

// isS3Website reports whether name is an S3 website endpoint (s3-website-REGION or
// s3-website.REGION, under amazonaws.com): what an alias to a bucket's website names.
func isS3Website(name string) bool {
	first, rest, _ := strings.Cut(name, ".")
	return strings.HasPrefix(first, "s3-website") && (strings.HasSuffix(rest, "amazonaws.com") || strings.HasSuffix(rest, "amazonaws.com.cn"))
}

// batch is the one batch that sets every member to w (set identifier → weight; nil
// leaves weights) and every weighted set of a record to ttls[record] (nil leaves TTLs),
// with the members' ownership records; sets already so are left out.
//
// Each set is rewritten as DELETE, exactly as read, and CREATE: Route 53 has no
// conditional write, but refuses the whole batch when a DELETE does not match the set
// it finds, so the pair is a compare-and-swap. A publisher that changed a member's
// targets after the read makes the batch fail instead of being reverted (the caller
// reads again and retries). Every DELETE comes before every CREATE, so a batch that
// changes a group's TTL is valid however Route 53 checks that every weighted set of a
// name and type has one TTL, change by change or for the whole batch.
//
// Every batch carries the authority records: CREATE where the zone has none (failing
// when another runner created one since the read), else DELETE as read and CREATE. From
// the first write on no publisher reverts what the cutover wrote, and every batch, even
// one redone after a crash whose weights had already landed, has a change of its own to
// follow to INSYNC (Route 53 applies a zone's changes in order, so its INSYNC covers the
// earlier).
func (l *live) batch(w map[string]int64, ttls map[spec.Record]int64) changes.Batch {
	var dels, creates changes.Batch
	swap := func(old, now *endpoint.Endpoint) {
		dels = append(dels, changes.Change{Action: changes.Delete, Endpoint: old})
		creates = append(creates, changes.Change{Action: changes.Create, Endpoint: now})
	}
	for i, a := range l.authority {
		if cur := l.current[i]; cur != nil {
			dels = append(dels, changes.Change{Action: changes.Delete, Endpoint: cur})
		}
		creates = append(creates, changes.Change{Action: changes.Create, Endpoint: a})
	}
	for _, m := range l.members {
		want, ok := w[m.setID]
		if !ok {
			want = m.ep.Policy.Weight
		}
		wantTTL := m.ep.TTL
		if t, ok := ttls[m.record]; ok && !m.ep.IsAlias() {
			wantTTL = endpoint.NewTTL(t)
		}
		if m.ep.Policy.Weight == want && m.ep.TTL == wantTTL {
			continue
		}
		e := withWeight(m.ep, want)
		e.TTL = wantTTL
		swap(m.ep, e)
		for _, t := range m.txt {
			if t.Policy.Weight != want {
				swap(t, withWeight(t, want))
			}
		}
	}
	for _, o := range l.others {
		t, ok := ttls[o.record]
		// untouchable refuses a write that would have to rewrite an unowned one; in a
		// partial rollback it is left out, and Route 53 judges the batch.
		if !ok || o.ep.IsAlias() || o.ep.Owner() == "" || o.ep.TTL == endpoint.NewTTL(t) {
			continue
		}
		e := o.ep.Clone()
		e.TTL = endpoint.NewTTL(t)
		swap(o.ep, e)
	}
	return append(dels, creates...)
}

// after returns the zone as it will be once b is applied: for `cutover plan`, which
// renders each batch against what the ones before it leave, and for the hold after a
// write, which paces on the TTL just written.
func (l *live) after(b changes.Batch) *live {
	written := map[endpoint.Key]*endpoint.Endpoint{}
	for _, c := range b {
		if c.Action != changes.Delete { // a batch's DELETE is followed by the CREATE of the set
			written[c.Endpoint.Key()] = c.Endpoint
		}
	}
	update := func(ms []member) []member {
		out := slices.Clone(ms)
		for i := range out {
			m := &out[i]
			if e := written[m.ep.Key()]; e != nil {
				m.ep = e
			}
			m.txt = slices.Clone(m.txt)
			for j, t := range m.txt {
				if e := written[t.Key()]; e != nil {
					m.txt[j] = e
				}
			}
		}
		return out
	}
	n := *l
	n.members, n.others = update(l.members), update(l.others)
	n.current = slices.Clone(l.authority)
	n.takenOver = nil
	n.measure()
	return &n
}

// moved lists what differs between l and a later read of the zone, now, among the sets a
// batch built on l deletes exactly as read: the members and their ownership records, the
// other weighted sets of their names, and the authority records. Empty when nothing did:
// a batch refused then was refused for another reason than a concurrent change.
func (l *live) moved(now *live) []string {
	was, is := l.sets(), now.sets()
	keys := slices.Collect(maps.Keys(was))
	for k := range is {
		if was[k] == nil {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b endpoint.Key) int { return strings.Compare(a.String(), b.String()) })
	var out []string
	for _, k := range keys {
		a, b := was[k], is[k]
		switch {
		case a == nil:
			out = append(out, fmt.Sprintf("%s appeared (%s)", k, describeSet(b)))
		case b == nil:
			out = append(out, fmt.Sprintf("%s is gone (was %s)", k, describeSet(a)))
		case !a.SameRecord(b) || a.TTL != b.TTL:
			out = append(out, fmt.Sprintf("%s: %s, now %s", k, describeSet(a), describeSet(b)))
		}
	}
	return out
}

// sets returns what l read, by key.
func (l *live) sets() map[endpoint.Key]*endpoint.Endpoint {
	out := map[endpoint.Key]*endpoint.Endpoint{}
	for _, ms := range [][]member{l.members, l.others} {
		for _, m := range ms {
			out[m.ep.Key()] = m.ep
			for _, t := range m.txt {
				out[t.Key()] = t
			}
		}
	}
	for _, c := range l.current {
		if c != nil {
			out[c.Key()] = c
		}
	}
	return out
}

// describeSet renders a set's values, weight and TTL for messages.
func describeSet(e *endpoint.Endpoint) string {
	s := strings.Join(e.Targets, " ")
	if e.Policy.Kind == endpoint.Weighted {
		s += fmt.Sprintf(" weight %d", e.Policy.Weight)
	}
	if e.TTL.IsConfigured() {
		s += fmt.Sprintf(" TTL %d", e.TTL.Seconds())
	}
	return s
}

func withWeight(e *endpoint.Endpoint, w int64) *endpoint.Endpoint {
	c := e.Clone()
	c.Policy = endpoint.WeightedPolicy(w)
	return c
}

// targets returns, per record, set identifier → the member's values, for the DNS gate: an
// alias's are its target's own values when the target is in the zone, else its target's
// name, which the gate resolves when it checks.
func (l *live) targets() map[spec.Record]map[string][]string {
	out := map[spec.Record]map[string][]string{}
	for _, m := range l.members {
		if out[m.record] == nil {
			out[m.record] = map[string][]string{}
		}
		vals := m.ep.Targets
		if m.ep.IsAlias() && m.target.values != nil {
			vals = m.target.values
		}
		out[m.record][m.setID] = slices.Clone(vals)
	}
	return out
}

// ownershipSwaps rewrites every ownership record of the plan's weighted sets exactly as
// read: a DELETE of it as read and a CREATE of the same. It changes nothing, but makes a
// batch a compare-and-swap of what the publishers recorded: a publisher that records
// another wanted weight after the read makes the batch fail, to be read again.
func (l *live) ownershipSwaps() (dels, creates changes.Batch) {
	for _, ms := range [][]member{l.members, l.others} {
		for _, m := range ms {
			for _, t := range m.txt {
				dels = append(dels, changes.Change{Action: changes.Delete, Endpoint: t})
				creates = append(creates, changes.Change{Action: changes.Create, Endpoint: t.Clone()})
			}
		}
	}
	return dels, creates
}

// unlistedTwins finds the weighted members of from or to that share a listed record's
// name in the other address family (an AAAA beside an A, or the reverse) but are not in
// the plan: external-dns and crossfade publish an alias to a load balancer as an A and
// an AAAA twin, and a cutover of the A alone would leave IPv6 clients where they were.
func unlistedTwins(p *spec.Plan, groups map[spec.Record][]*endpoint.Endpoint) []string {
	listed := map[spec.Record]bool{}
	for _, r := range p.Records {
		listed[r] = true
	}
	var problems []string
	for _, r := range p.Records {
		twin := spec.Record{Name: r.Name}
		switch r.Type {
		case endpoint.TypeA:
			twin.Type = endpoint.TypeAAAA
		case endpoint.TypeAAAA:
			twin.Type = endpoint.TypeA
		default:
			continue
		}
		if listed[twin] {
			continue
		}
		for _, e := range groups[twin] {
			if e.SetIdentifier == p.From || e.SetIdentifier == p.To {
				problems = append(problems, fmt.Sprintf("%s %s: weighted members of %s and %s stand at this name too, and the plan does not list them: moving only the %s records would leave the other address family's clients where they are; add `- name: %s` with `type: %s` to records",
					r.Name, twin.Type, p.From, p.To, r.Type, r.Name, twin.Type))
				listed[twin] = true
				break
			}
		}
	}
	return problems
}

// dnsLever is the Route 53 lever: the weights of the plan's weighted record sets.
type dnsLever struct {
	lever.Base
	p   *spec.Plan
	dns DNS
	reg *registry.TXT
}

// New returns the Route 53 lever of p: its weighted record sets in the zone dns
// serves, their ownership records found with reg. It calls nothing until it is pulled.
func New(p *spec.Plan, dns DNS, reg *registry.TXT) lever.Lever {
	if len(p.Zones) > 0 {
		return lever.Wrap[*fleet](&fleetLever{p: p, dns: dns, reg: reg})
	}
	return lever.Wrap[*live](&dnsLever{p: p, dns: dns, reg: reg})
}

var (
	_ lever.Typed[*live] = (*dnsLever)(nil)
	_ lever.Snapshot     = (*live)(nil)
)

// Kind is LeverRoute53.
func (d *dnsLever) Kind() string { return lever.Route53 }

// Read reads the plan's members from the zone (readLive).
func (d *dnsLever) Read(ctx context.Context, o lever.ReadOptions) (*live, error) {
	return readLive(ctx, d.dns, d.reg, d.p, o)
}

// StartProblems are members whose weights differ between records, and, when the plan
// lowers the TTL, sets nobody owns whose TTL would have to move with it and aliases whose
// target's TTL is above the lowered one (unlowerable).
func (d *dnsLever) StartProblems(l *live) []string {
	problems := l.differingWeights()
	if d.p.LowerTTL > 0 {
		problems = append(problems, l.unlowerable(d.p.LowerTTL)...)
		problems = append(problems, l.untouchable(lever.LowerTTLs(l.groupTTL, d.p.LowerTTL))...)
	}
	return problems
}

// unlowerable lists the alias members whose answers carry a TTL above lower: their
// target's, which no write to the zone changes. A plan that lowers the TTL paces its steps
// on the lowered one, and resolvers would hold these answers longer than each step, so
// such a plan is refused rather than lowering only the other members.
func (l *live) unlowerable(lower int64) []string {
	var out []string
	for _, m := range l.members {
		if !m.ep.IsAlias() || m.effectiveTTL() <= lower {
			continue
		}
		out = append(out, fmt.Sprintf("spec.ttl.lower: %s is an alias to %s: Route 53 answers it with its target's TTL, %ds (%s), which no write to the zone can lower, "+
			"so resolvers would keep its answers longer than a step paced on %ds: drop spec.ttl.lower (every step then holds at least %ds), or set it to %d or more",
			m.ep.Key(), aliasName(m.ep), m.effectiveTTL(), m.target.why, lower, l.maxTTL, m.effectiveTTL()))
	}
	return out
}

// Check refuses a TTL write that would have to rewrite a set nobody owns.
func (d *dnsLever) Check(l *live, c lever.Change) []string {
	return l.untouchable(c.TTLs)
}

// Write sends the weights (and each record's TTL in c.TTLs) in one batch, built on s.
// Redone after a crash, it sends the batch again, whatever already landed: the batch
// always has a change to follow to INSYNC. The batch is a compare-and-swap of every set it
// rewrites (see live.batch): refused because the zone changed since the read, it is built
// again from another read, up to lever.CASAttempts times, then fails naming what moved
// (casWrite). Refused because another runner now holds the weights, it fails with
// *HeldError.
func (d *dnsLever) Write(ctx context.Context, l *live, c lever.Change, env lever.Env[*live]) (lever.Written, error) {
	w := casWrite{dns: d.dns, c: c, what: env.What, comment: env.Comment, log: env.Log, prefix: env.What,
		lostMsg:    "write landed but its change id was lost: writing the authority record again to follow one to INSYNC",
		beforeSend: env.BeforeSend,
		reread:     func(ctx context.Context, _ bool) (*live, error) { return env.Read(ctx) },
		drift:      env.Drift}
	l, batch, id, err := w.send(ctx, l)
	if err != nil {
		return lever.Written{}, err
	}
	// Apply the batch to what we know, so that the hold paces on the TTL just written,
	// and compares the weights just written.
	return lever.Written{ID: id, Detail: fmt.Sprintf("%d changes", len(batch)), Calls: len(batch),
		Pending: fmt.Sprintf("change %s not INSYNC", id), After: l.after(batch)}, nil
}

// InEffect reports whether Route 53 has the change INSYNC.
func (d *dnsLever) InEffect(ctx context.Context, w lever.Written, _ *live) (bool, error) {
	return d.dns.InSync(ctx, w.ID)
}

// DryRun renders the batch as the provider would send it: for Route 53, the
// --change-batch JSON of `aws route53 change-resource-record-sets`.
func (d *dnsLever) DryRun(ctx context.Context, l *live, c lever.Change) (lever.Rendered, error) {
	b := l.batch(c.Weights, c.TTLs)
	doc, err := d.dns.DryRun(ctx, l.zone, b)
	if err != nil {
		return lever.Rendered{}, err
	}
	return lever.Rendered{Doc: doc, Calls: len(b), After: l.after(b)}, nil
}

// Describe sets the preview's zone and TTL, and says who owns each member, and which
// other cluster's sets a TTL change moves along.
func (d *dnsLever) Describe(_ context.Context, l *live, pv *lever.Description) error {
	pv.Zone, pv.TTL = l.zone, l.maxTTL
	for _, m := range l.members {
		pv.Owners = append(pv.Owners, fmt.Sprintf("%s owned by %s (%s)", m.ep.Key(), m.ep.Owner(), m.ep.Resource()))
		if m.ep.IsAlias() {
			pv.Notes = append(pv.Notes, fmt.Sprintf("%s is an alias to %s: its answers carry its target's TTL, %ds (%s): every step holds at least that, and spec.ttl.lower cannot lower it",
				m.ep.Key(), aliasName(m.ep), m.effectiveTTL(), m.target.why))
		}
	}
	lowers := lever.LowerTTLs(l.groupTTL, d.p.LowerTTL)
	for _, o := range l.others {
		if _, ok := lowers[o.record]; ok && d.p.LowerTTL > 0 && !o.ep.IsAlias() {
			pv.Owners = append(pv.Owners, fmt.Sprintf("%s owned by %s (%s): its weight stays, its TTL moves with its group's (Route 53 gives a name and type's weighted sets one TTL)",
				o.ep.Key(), o.ep.Owner(), o.ep.Resource()))
		}
	}
	return nil
}

// Summary names the zone, the records, the clusters and the TTL.
func (d *dnsLever) Summary(l *live) string {
	return fmt.Sprintf("zone %s, %d records, from %s to %s, TTL %ds", l.zone, len(d.p.Records), d.p.From, d.p.To, l.maxTTL)
}

// DriftCause is lever.DriftCause.
func (d *dnsLever) DriftCause() string { return lever.DriftCause }

// Weights returns set identifier → weight as the zone holds it (weights).
func (l *live) Weights() map[string]int64 { return l.weights() }

// Members are the from and to members of every record, by their key.
func (l *live) Members() []lever.Member {
	out := make([]lever.Member, 0, len(l.members))
	for _, m := range l.members {
		k := m.ep.Key().String()
		out = append(out, lever.Member{Key: k, Name: k, Weight: m.ep.Policy.Weight, Source: sourceOf(m.ep)})
	}
	return out
}

// TTL is the longest time resolvers may hold an answer of the members: the largest TTL
// among the members and others, an alias member's being its target's.
func (l *live) TTL() int64 { return l.maxTTL }

// RecordTTLs is, per record, the TTL its weighted sets share.
func (l *live) RecordTTLs() map[spec.Record]int64 { return l.groupTTL }

// GateInput has, per record, set identifier → the member's values (targets), for the
// DNS gate; the Route 53 lever has no target groups.
func (l *live) GateInput(map[string]int64) lever.GateInput {
	return lever.GateInput{Targets: l.targets()}
}

// NoTraffic names the first record whose weighted sets would all have weight 0 with the
// members at w.
func (l *live) NoTraffic(w map[string]int64) string {
	var seen []spec.Record
	for _, ms := range [][]member{l.members, l.others} {
		for _, m := range ms {
			if slices.Contains(seen, m.record) {
				continue
			}
			seen = append(seen, m.record)
			if l.evenSplit(m.record, w) {
				return m.record.Name + " " + m.record.Type
			}
		}
	}
	return ""
}

// Skipped says which members a partial read left out.
func (l *live) Skipped() []string { return l.skipped }

// TakenOver are the runners whose authority records the next batch replaces.
func (l *live) TakenOver() []registry.Runner { return l.takenOver }

// StartData keeps each record's TTL, restored when the cutover ends.
func (l *live) StartData() json.RawMessage {
	// The journal's start data: "name type" → TTL, as the engine reads it back.
	d := struct {
		TTLs map[string]int64 `json:"ttls,omitempty"`
	}{TTLs: map[string]int64{}}
	for r, t := range l.groupTTL {
		d.TTLs[r.Name+" "+r.Type] = t
	}
	b, _ := json.Marshal(d)
	return b
}

// LogAttr is the zone's name.
func (l *live) LogAttr() slog.Attr { return slog.String("zone", l.zone.Name) }

// Select selects every weighted A, AAAA and CNAME record set of the zone with a member
// for from and one for to (spec.select.allWeighted), in name and type order. A name with
// one of them only, or only other clusters' members, is left out; a selection that finds
// nothing is refused.
func (d *dnsLever) Select(ctx context.Context) (lever.Selection, error) {
	if d.dns == nil {
		return lever.Selection{}, fmt.Errorf("cutover %s selects the zone's weighted records (spec.select), and no DNS provider is configured", d.p.Name)
	}
	zone, err := findZone(ctx, d.dns, d.p)
	if err != nil {
		return lever.Selection{}, &lever.ReadError{Err: err}
	}
	recs, err := d.dns.Records(ctx, zone)
	if err != nil {
		return lever.Selection{}, &lever.ReadError{Err: fmt.Errorf("zone %s: %w", zone, err)}
	}
	s := lever.Selection{Records: selectWeighted(recs, d.p.From, d.p.To, nil)}
	if len(s.Records) == 0 {
		return lever.Selection{}, &lever.NotReadyError{Problems: []string{fmt.Sprintf(
			"spec.select: zone %s has no weighted record set with members for both %s and %s: nothing to move", zone.Name, d.p.From, d.p.To)}}
	}
	return s, nil
}

// selectWeighted returns the weighted A, AAAA and CNAME records among recs with a member
// for from and one for to, in name and type order; keep, when set, says which names may be
// selected (a plan of several zones: those whose zone is this one).
func selectWeighted(recs []*endpoint.Endpoint, from, to string, keep func(name string) bool) []spec.Record {
	ids := map[spec.Record]map[string]bool{}
	for _, e := range recs {
		if keep != nil && !keep(e.Name) {
			continue
		}
		switch e.Type {
		case endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME:
		default:
			continue
		}
		if e.Policy.Kind != endpoint.Weighted {
			continue
		}
		r := spec.Record{Name: e.Name, Type: e.Type}
		if ids[r] == nil {
			ids[r] = map[string]bool{}
		}
		ids[r][e.SetIdentifier] = true
	}
	var out []spec.Record
	for r, set := range ids {
		if set[from] && set[to] {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b spec.Record) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Type, b.Type))
	})
	return out
}
