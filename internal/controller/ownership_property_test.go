package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/route53"
	"github.com/crossfade-io/crossfade/internal/provider/route53/route53test"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/sandbox"
	"github.com/crossfade-io/crossfade/internal/sandbox/zones"
)

// The ownership property test (docs/architecture.md, safety rule 1: never delete or overwrite a record
// this owner does not own). Two owners, blue and green, each a Syncer with its own TXT
// registry, and a third party that writes through the API without ownership records (and,
// as "red", with the ownership records of an owner that is not running) take turns on a
// handful of names of one sandbox zone. Every operation changes one actor's wishes and runs
// that actor's sync; afterwards every record set someone else wrote must be byte-identical
// and still there. Who wrote a set is tracked by the test from the zone readings around each
// operation, not read from the ownership records: those are what is under test.
//
// Environment: CROSSFADE_PROPERTY_SEED replays a seed (each variant adds its index),
// CROSSFADE_PROPERTY_OPS sets the number of operations per variant.

const (
	propSeedEnv = "CROSSFADE_PROPERTY_SEED"
	propOpsEnv  = "CROSSFADE_PROPERTY_OPS"
	// propDefaultSeed makes a plain `go test` deterministic.
	propDefaultSeed = 20261201
	propZone        = "example.com"
)

// ownershipVariant is one registry configuration of the run.
type ownershipVariant struct {
	name string
	// prefix is every owner's --txt-prefix (red's too).
	prefix string
	// legacy makes blue write the legacy same-name TXT form beside the type-prefixed one.
	legacy bool
	// apex adds the zone apex to the names: only a prefix ending in a dot keeps its
	// ownership records inside the zone there (external-dns issue 449).
	apex bool
	// wildcard adds a wildcard name, which Route 53 lists as \052 and whose ownership
	// records ("a-*") carry the asterisk as an ordinary character.
	wildcard bool
	// greenPolicy is green's --policy; "" means sync.
	greenPolicy changes.Policy
	// greenID is the owner id green's controller runs with; "" means "green". The
	// self-tests give it blue's.
	greenID string
	// wrap, when set, stands between each owner's Syncer and the API: the self-tests use
	// it to break the system on purpose and check that the property test notices.
	wrap func(p fullProvider) fullProvider
}

// fullProvider is all a Syncer uses of the Route 53 provider; the test's wrappers keep it
// whole, alias adjustment and dry-run included.
type fullProvider interface {
	provider.Provider
}

var ownershipVariants = []ownershipVariant{
	{name: "type-prefixed"},
	{name: "blue-writes-legacy", legacy: true},
	{name: "txt-prefix", prefix: "txt-"},
	{name: "templated-prefix-at-apex", prefix: "txt-%{record_type}.", apex: true},
	{name: "green-upsert-only", greenPolicy: changes.UpsertOnly},
	{name: "wildcard", wildcard: true},
}

// names are the names the actors fight over.
func (v ownershipVariant) names() []string {
	names := slices.Clone(propNames)
	if v.apex {
		names = append(names, propZone)
	}
	if v.wildcard {
		names = append(names, "*.example.com")
	}
	return names
}

// ownershipNames maps every ownership TXT name the variant's owners may write for name to
// the record types it claims, computed from external-dns's naming rules independently of
// the registry under test: the type-prefixed form ("a-" claims an A, "cname-" a CNAME or an
// alias A) and the legacy same-name form (any of them).
func (v ownershipVariant) ownershipNames(name string) map[string][]string {
	const tmpl = "%{record_type}"
	first, rest, _ := strings.Cut(name, ".")
	typed := func(t string) string {
		if strings.Contains(v.prefix, tmpl) {
			return strings.ReplaceAll(v.prefix, tmpl, t) + first + "." + rest
		}
		return v.prefix + t + "-" + first + "." + rest
	}
	return map[string][]string{
		typed("a"):     {endpoint.TypeA},
		typed("cname"): {endpoint.TypeCNAME, endpoint.TypeA},
		strings.ReplaceAll(v.prefix, tmpl, "") + first + "." + rest: {endpoint.TypeA, endpoint.TypeCNAME},
	}
}

// Actors. Blue and green run syncs; third writes unowned records through the API and red's
// owned ones (red is an owner whose controller is not running).
const (
	actorBlue  = "blue"
	actorGreen = "green"
	actorThird = "third"
	actorRed   = "red"
	actorZone  = "zone" // the apex SOA and NS
)

var (
	propNames    = []string{"app.example.com", "web.example.com", "api.example.com", "cdn.example.com"}
	aliasTargets = []string{"lb1.example.com", "lb2.example.com"}
)

type recordKind uint8

const (
	kindA     recordKind = iota // an A record with addresses
	kindAlias                   // a CNAME marked alias: written as an alias A
	kindCNAME                   // a plain CNAME
)

// spec is what one owner wants at one name.
type spec struct {
	kind    recordKind
	targets []string
	ttl     int64 // 0 for an alias
	policy  endpoint.RoutingPolicy
}

func (s spec) String() string {
	var what string
	switch s.kind {
	case kindA:
		what = "A " + strings.Join(s.targets, ",")
	case kindAlias:
		what = "alias A -> " + s.targets[0]
	case kindCNAME:
		what = "CNAME " + s.targets[0]
	}
	if s.ttl != 0 {
		what += fmt.Sprintf(" ttl=%d", s.ttl)
	}
	return s.policy.String() + " " + what
}

// endpoint is the desired record as a source would state it: a member of a weighted or
// failover group carries the owner (the cluster) as its set identifier.
func (s spec) endpoint(owner, name string) *endpoint.Endpoint {
	first, _, _ := strings.Cut(name, ".")
	e := &endpoint.Endpoint{Name: name, Targets: endpoint.NewTargets(s.targets...), TTL: endpoint.TTL(s.ttl), Policy: s.policy,
		Labels: endpoint.Labels{endpoint.ResourceLabel: "service/" + owner + "/" + first}}
	switch s.kind {
	case kindA:
		e.Type = endpoint.TypeA
	case kindAlias:
		e.Type = endpoint.TypeCNAME
		e.SetProp(endpoint.PropAlias, "true")
	case kindCNAME:
		e.Type = endpoint.TypeCNAME
	}
	if s.policy.Kind != endpoint.Simple {
		e.SetIdentifier = owner
	}
	return e
}

// propOp is one operation, concrete enough to replay without the generator.
type propOp struct {
	actor string
	// Owner operations: the owner's wish at name becomes spec (nil: none); what names the
	// generator's move, for the log.
	name string
	spec *spec
	what string
	// Third-party operations: create sets in one batch as group (create != nil), or delete
	// the sets of group.
	group  int
	author string // actorThird or actorRed
	create []*endpoint.Endpoint
	about  string
	// during, on an owner's operation, is another actor's operation that runs inside the
	// owner's sync, after it listed the zone and before it writes: the race a plan made
	// from a stale listing must lose without overwriting anything.
	during *propOp
}

func (o propOp) String() string {
	if o.during != nil {
		inner := o
		inner.during = nil
		return fmt.Sprintf("%s [after its listing, before its writes: %s]", inner, o.during)
	}
	switch {
	case o.actor != actorThird && o.spec == nil:
		return fmt.Sprintf("%s %s: drop %s", o.actor, o.what, o.name)
	case o.actor != actorThird:
		return fmt.Sprintf("%s %s: %s = %s", o.actor, o.what, o.name, o.spec)
	case o.create != nil:
		var parts []string
		for _, e := range o.create {
			parts = append(parts, describeEndpoint(e))
		}
		return fmt.Sprintf("third creates #%d (%s): %s", o.group, o.about, strings.Join(parts, "; "))
	default:
		return fmt.Sprintf("third deletes #%d", o.group)
	}
}

// propFinding is one broken expectation.
type propFinding struct {
	// kind is "safety" (another's record set touched) or "not converged" (a second sync
	// would change more, with no conflict to explain it).
	kind string
	// sig groups findings of one cause; shrinking keeps it.
	sig    string
	op     int
	detail string
}

// propStats counts what a run exercised, so that a pass means something.
type propStats struct {
	ops                map[string]int
	applied, conflicts int
	thirdRejected      int
	// refusals counts, by normalised reason, the owners' changes Route 53 refused: the
	// planner sent what the zone it had read could not take. The sync reports them as
	// conflicts and writes every other name, so they are logged, not failed.
	refusals map[string]int
	example  map[string]string
}

func (s *propStats) refused(c changes.Conflict, i int, op propOp) {
	reason := c.Reason
	if _, r53, ok := strings.Cut(reason, "change batch rejected: "); ok {
		reason = r53
	}
	sig := normalizeMessage(reason)
	if s.refusals[sig] == 0 {
		s.example[sig] = fmt.Sprintf("op %d (%s): %s", i, op, c)
	}
	s.refusals[sig]++
}

// propRun is one sandbox zone and the actors on it.
type propRun struct {
	tb      testing.TB
	v       ownershipVariant
	sb      *sandbox.Sandbox
	zone    provider.Zone
	raw     *route53.Provider // the third party's client
	redReg  *registry.TXT
	syncers map[string]*Syncer
	desired map[string]map[string]spec
	// author is who wrote each record set now in the zone, as the test saw it happen.
	author map[endpoint.Key]string
	// groups are the third party's sets now in the zone, by group id.
	groups map[int][]*endpoint.Endpoint
	// claims maps each ownership TXT name an owner may write to what it speaks for.
	claims map[string]claim
	stats  propStats

	// pending is the operation to run inside the current owner's sync, once it has listed
	// the zone; mid is the zone after it ran, inner what it broke, and current the index of
	// the operation it runs inside.
	pending *propOp
	mid     zoneSets
	inner   []propFinding
	current int
	// strictRefusals makes a change Route 53 refuses a finding when nothing raced the
	// sync: the planner had the whole zone and should have reported a conflict instead.
	strictRefusals bool
}

// interposer runs the run's pending operation right after the zone is listed, so that the
// owner plans from a listing that is stale by the time it writes.
type interposer struct {
	fullProvider
	run *propRun
}

func (p *interposer) Records(ctx context.Context, z provider.Zone) ([]*endpoint.Endpoint, error) {
	recs, err := p.fullProvider.Records(ctx, z)
	if r := p.run; r.pending != nil {
		op := *r.pending
		r.pending = nil
		r.inner = append(r.inner, r.step(r.current, op)...)
		r.mid = readZone(r.tb, r.sb, r.zone.ID)
	}
	return recs, err
}

// claim is the record name an ownership TXT name speaks for, and the types it claims.
type claim struct {
	name  string
	types []string
}

func newPropRun(tb testing.TB, v ownershipVariant) *propRun {
	tb.Helper()
	sb, z := startPropZone(tb)
	r := &propRun{tb: tb, v: v, sb: sb, zone: provider.Zone{ID: z.ID, Name: propZone}, raw: route53test.New(tb, sb),
		syncers: map[string]*Syncer{}, desired: map[string]map[string]spec{}, author: map[endpoint.Key]string{},
		groups: map[int][]*endpoint.Endpoint{}, claims: map[string]claim{}, stats: propStats{ops: map[string]int{}, refusals: map[string]int{}, example: map[string]string{}}}
	for _, o := range []string{actorBlue, actorGreen} {
		id := o
		if o == actorGreen && v.greenID != "" {
			id = v.greenID
		}
		reg, err := registry.New(registry.Config{OwnerID: id, Prefix: v.prefix, WriteLegacy: v.legacy && o == actorBlue})
		if err != nil {
			tb.Fatal(err)
		}
		var p fullProvider = route53test.New(tb, sb)
		if v.wrap != nil {
			p = v.wrap(p)
		}
		p = &interposer{fullProvider: p, run: r}
		policy := changes.Sync
		if o == actorGreen && v.greenPolicy != "" {
			policy = v.greenPolicy
		}
		// The owners delete their own records at will (the model's "delete" ops, often the
		// owner's last record): what is checked is whose records go, not how many, so the
		// deletion guard (deleteguard_loop_test.go, sync_test.go) lets them through.
		r.syncers[o] = &Syncer{Provider: p, Registry: reg, Policy: policy, Guard: DeleteGuard{Allow: true}}
		r.desired[o] = map[string]spec{}
	}
	for _, n := range v.names() {
		for txt, types := range v.ownershipNames(n) {
			r.claims[txt] = claim{name: n, types: types}
		}
	}
	var err error
	if r.redReg, err = registry.New(registry.Config{OwnerID: actorRed, Prefix: v.prefix}); err != nil {
		tb.Fatal(err)
	}
	for k := range readZone(tb, sb, z.ID) {
		r.author[k] = actorZone
	}
	// The alias targets: the third party's, never deleted, so that an alias is always valid.
	var lbs []*endpoint.Endpoint
	for i, n := range aliasTargets {
		lbs = append(lbs, &endpoint.Endpoint{Name: n, Type: endpoint.TypeA, TTL: 300, Targets: endpoint.NewTargets(fmt.Sprintf("192.0.2.%d", 200+i))})
	}
	if err := r.raw.Apply(syncCtx, r.zone, batchOf(changes.Create, lbs...)); err != nil {
		tb.Fatal(err)
	}
	for _, e := range lbs {
		r.author[e.Key()] = actorThird
	}
	return r
}

func (r *propRun) close() {
	if err := r.sb.Close(); err != nil {
		r.tb.Errorf("close sandbox: %v", err)
	}
}

func (r *propRun) desiredOf(owner string) []*endpoint.Endpoint {
	var out []*endpoint.Endpoint
	for _, name := range slices.Sorted(maps.Keys(r.desired[owner])) {
		out = append(out, r.desired[owner][name].endpoint(owner, name))
	}
	return out
}

// next draws an operation from the run's current state.
func (r *propRun) next(rng *rand.Rand, id int) propOp {
	var op propOp
	switch p := rng.Float64(); {
	case p < 0.25:
		return r.nextThird(rng, id)
	case p < 0.625:
		op = r.nextOwner(rng, actorBlue)
	default:
		op = r.nextOwner(rng, actorGreen)
	}
	if rng.Float64() < 0.15 {
		var inner propOp
		if rng.IntN(2) == 0 {
			inner = r.nextThird(rng, id)
		} else {
			inner = r.nextOwner(rng, map[string]string{actorBlue: actorGreen, actorGreen: actorBlue}[op.actor])
		}
		op.during = &inner
	}
	return op
}

func randomTargets(rng *rand.Rand, k recordKind) []string {
	if k != kindA {
		return []string{aliasTargets[rng.IntN(len(aliasTargets))]}
	}
	out := []string{fmt.Sprintf("10.0.0.%d", 1+rng.IntN(4))}
	if rng.IntN(3) == 0 {
		out = append(out, fmt.Sprintf("10.0.1.%d", 1+rng.IntN(4)))
	}
	return out
}

func randomTTL(rng *rand.Rand) int64 { return []int64{60, 300}[rng.IntN(2)] }

// randomPolicy draws simple (40 %), weighted (40 %) or failover (20 %) routing.
func randomPolicy(rng *rand.Rand) endpoint.RoutingPolicy {
	switch x := rng.Float64(); {
	case x < 0.4:
		return endpoint.RoutingPolicy{}
	case x < 0.8:
		return endpoint.WeightedPolicy(rng.Int64N(6))
	default:
		return endpoint.FailoverPolicy([]string{endpoint.Primary, endpoint.Secondary}[rng.IntN(2)])
	}
}

func randomSpec(rng *rand.Rand) spec {
	s := spec{policy: randomPolicy(rng)}
	switch x := rng.Float64(); {
	case x < 0.6:
		s.kind = kindA
	case x < 0.9:
		s.kind = kindAlias
	default:
		s.kind = kindCNAME
	}
	s.targets = randomTargets(rng, s.kind)
	if s.kind != kindAlias {
		s.ttl = randomTTL(rng)
	}
	return s
}

func (r *propRun) nextOwner(rng *rand.Rand, owner string) propOp {
	names := slices.Sorted(maps.Keys(r.desired[owner]))
	if len(names) == 0 || rng.Float64() < 0.2 {
		s := randomSpec(rng)
		names := r.v.names()
		return propOp{actor: owner, what: "create", name: names[rng.IntN(len(names))], spec: &s}
	}
	name := names[rng.IntN(len(names))]
	s := r.desired[owner][name]
	s.targets = slices.Clone(s.targets)
	op := propOp{actor: owner, name: name, spec: &s}
	switch rng.IntN(6) {
	case 0:
		op.what, s.targets = "retarget", randomTargets(rng, s.kind)
	case 1:
		op.what = "reweight"
		s.policy = endpoint.WeightedPolicy((s.policy.Weight + 1 + rng.Int64N(5)) % 6)
	case 2:
		op.what = "repolicy"
		for was := s.policy.Kind; s.policy.Kind == was; {
			s.policy = randomPolicy(rng)
		}
	case 3:
		op.what = "alias-toggle"
		if s.kind == kindAlias {
			s.kind, s.ttl = kindA, randomTTL(rng)
		} else {
			s.kind, s.ttl = kindAlias, 0
		}
		s.targets = randomTargets(rng, s.kind)
	case 4:
		op.what = "ttl"
		if s.kind == kindAlias {
			op.what, s.kind, s.ttl = "alias-toggle", kindA, 60
			s.targets = randomTargets(rng, kindA)
		} else {
			s.ttl = map[int64]int64{60: 300, 300: 60}[s.ttl]
		}
	default:
		op.what, op.spec = "delete", nil
	}
	return op
}

func (r *propRun) nextThird(rng *rand.Rand, id int) propOp {
	if ids := slices.Sorted(maps.Keys(r.groups)); len(ids) > 0 && rng.Float64() < 0.35 {
		return propOp{actor: actorThird, group: ids[rng.IntN(len(ids))]}
	}
	names := r.v.names()
	name := names[rng.IntN(len(names))]
	first, _, _ := strings.Cut(name, ".")
	op := propOp{actor: actorThird, group: id, author: actorThird}
	n := 1 + rng.IntN(9)
	addr := endpoint.NewTargets(fmt.Sprintf("198.51.100.%d", n))
	switch x := rng.Float64(); {
	case x < 0.15:
		op.about = "unowned simple A"
		op.create = []*endpoint.Endpoint{{Name: name, Type: endpoint.TypeA, TTL: 300, Targets: addr}}
	case x < 0.3:
		op.about = "unowned weighted A"
		op.create = []*endpoint.Endpoint{{Name: name, Type: endpoint.TypeA, TTL: 300, SetIdentifier: "manual",
			Policy: endpoint.WeightedPolicy(rng.Int64N(6)), Targets: addr}}
	case x < 0.35:
		op.about = "unowned failover A"
		op.create = []*endpoint.Endpoint{{Name: name, Type: endpoint.TypeA, TTL: 300, SetIdentifier: "manual",
			Policy: endpoint.FailoverPolicy([]string{endpoint.Primary, endpoint.Secondary}[rng.IntN(2)]), Targets: addr}}
	case x < 0.4:
		op.about = "unowned CNAME"
		op.create = []*endpoint.Endpoint{{Name: name, Type: endpoint.TypeCNAME, TTL: 300, Targets: endpoint.NewTargets("elsewhere.example.net")}}
	case x < 0.55:
		op.about = "SPF TXT"
		op.create = []*endpoint.Endpoint{{Name: name, Type: endpoint.TypeTXT, TTL: 300, Targets: endpoint.Targets{`"v=spf1 -all"`}}}
	case x < 0.65:
		op.about = "MX"
		op.create = []*endpoint.Endpoint{{Name: name, Type: endpoint.TypeMX, TTL: 300, Targets: endpoint.Targets{"10 mail.example.net."}}}
	case x < 0.85:
		// An owner that is not running: its record and ownership records.
		op.author = actorRed
		rec := &endpoint.Endpoint{Name: name, Type: endpoint.TypeA, TTL: 60, Targets: endpoint.NewTargets(fmt.Sprintf("203.0.113.%d", n)),
			Labels: endpoint.Labels{endpoint.OwnerLabel: actorRed, endpoint.ResourceLabel: "service/red/" + first}}
		if rng.IntN(2) == 0 {
			op.about = "red's owned simple A"
		} else {
			op.about = "red's owned weighted A"
			rec.SetIdentifier, rec.Policy = actorRed, endpoint.WeightedPolicy(rng.Int64N(6))
		}
		op.create = append([]*endpoint.Endpoint{rec}, r.redReg.For(rec)...)
	default:
		// A TXT record that is not an ownership record, standing where an owner's would go.
		txts := slices.Sorted(maps.Keys(r.v.ownershipNames(name)))
		op.about = "plain TXT at an ownership name"
		op.create = []*endpoint.Endpoint{{Name: txts[rng.IntN(len(txts))], Type: endpoint.TypeTXT, TTL: 300, Targets: endpoint.Targets{`"hello"`}}}
	}
	return op
}

// step runs one operation and returns what it broke.
func (r *propRun) step(i int, op propOp) []propFinding {
	r.stats.ops[op.actor]++
	before := readZone(r.tb, r.sb, r.zone.ID)
	if op.actor == actorThird {
		r.thirdParty(op, before)
		return nil
	}
	if op.spec == nil {
		delete(r.desired[op.actor], op.name)
	} else {
		r.desired[op.actor][op.name] = *op.spec
	}
	s := r.syncers[op.actor]
	if op.during != nil {
		r.pending, r.current = op.during, i
	}
	rep, err := s.Sync(syncCtx, r.desiredOf(op.actor))
	if err != nil {
		r.tb.Fatalf("op %d (%s): %v", i, op, err)
	}
	var out []propFinding
	if op.during != nil {
		if r.pending != nil {
			r.tb.Fatalf("op %d (%s): the sync never listed the zone", i, op)
		}
		// The owner's writes are what changed after the interleaved operation.
		before, out = r.mid, r.inner
		r.mid, r.inner = nil, nil
	}
	after := readZone(r.tb, r.sb, r.zone.ID)
	out = append(out, r.checkOwner(i, op, before, after, rep)...)
	for _, z := range rep.Zones {
		r.stats.applied += z.Applied
	}
	r.stats.conflicts += len(rep.Conflicts())

	if err := rep.Err(); err != nil {
		r.tb.Fatalf("op %d (%s): sync failed with no faults injected: %v", i, op, err)
	}
	for _, z := range rep.Zones {
		for _, c := range z.Refused {
			r.stats.refused(c, i, op)
			if r.strictRefusals && op.during == nil {
				out = append(out, propFinding{kind: "refused", sig: "refused: " + normalizeMessage(c.Reason), op: i,
					detail: fmt.Sprintf("nobody wrote since %s listed the zone, yet Route 53 refused its changes: %s\n  it sent:\n%s", op.actor, c, renderBatches(rep))})
			}
		}
	}
	if op.during != nil {
		// The sync planned from a listing the interleaved operation made stale: one more
		// sync, checked like the first, catches up before convergence is judged.
		before = readZone(r.tb, r.sb, r.zone.ID)
		if rep, err = s.Sync(syncCtx, r.desiredOf(op.actor)); err != nil {
			r.tb.Fatalf("op %d (%s): catching-up sync: %v", i, op, err)
		}
		out = append(out, r.checkOwner(i, op, before, readZone(r.tb, r.sb, r.zone.ID), rep)...)
		if err := rep.Err(); err != nil {
			r.tb.Fatalf("op %d (%s): catching-up sync failed with no faults injected: %v", i, op, err)
		}
	}
	// Converged: the same wishes again change nothing, unless conflicts explain why.
	again, err := dryRun(s).Sync(syncCtx, r.desiredOf(op.actor))
	if err != nil {
		r.tb.Fatalf("op %d (%s): second sync: %v", i, op, err)
	}
	if n := plannedBatches(again); n > 0 && len(again.Conflicts())+len(rep.Conflicts()) == 0 {
		var actions []string
		for _, z := range again.Zones {
			for _, b := range z.Changes.Batches {
				for _, c := range b {
					actions = append(actions, string(c.Action)+" "+c.Endpoint.Type)
				}
			}
		}
		slices.Sort(actions)
		out = append(out, propFinding{kind: "not converged", sig: "not converged: " + strings.Join(slices.Compact(actions), ", "), op: i,
			detail: fmt.Sprintf("a second sync of %s with the same wishes plans %d batches:\n%s", op.actor, n, renderBatches(again))})
	}
	return out
}

// thirdParty writes or deletes one group of the third party's sets. Route 53 refusing a
// write (the name is taken) is part of the game.
func (r *propRun) thirdParty(op propOp, before zoneSets) {
	sets := op.create
	if op.create != nil {
		err := r.raw.Apply(syncCtx, r.zone, batchOf(changes.Create, op.create...))
		var rej *provider.RejectedError
		switch {
		case err == nil:
			r.groups[op.group] = op.create
			for _, e := range op.create {
				r.author[e.Key()] = op.author
			}
		case errors.As(err, &rej):
			r.stats.thirdRejected++
		default:
			r.tb.Fatalf("third party: %s: %v", op, err)
		}
	} else if g, ok := r.groups[op.group]; ok {
		sets = g
		delete(r.groups, op.group)
		// A refusal here means an owner changed the set, which checkOwner already reported.
		if err := r.raw.Apply(syncCtx, r.zone, batchOf(changes.Delete, g...)); err == nil {
			for _, e := range g {
				delete(r.author, e.Key())
			}
		}
	}
	for _, k := range diffZones(before, readZone(r.tb, r.sb, r.zone.ID)).changed() {
		if !slices.ContainsFunc(sets, func(e *endpoint.Endpoint) bool { return e.Key() == k }) {
			r.tb.Fatalf("test bug: the third party's %s changed %s", op, k)
		}
	}
}

// checkOwner compares the zone before and after an owner's sync: every set that changed
// must have been written by that owner; its own ownership records change only with their
// record; and no ownership record it writes may claim a set someone else wrote.
func (r *propRun) checkOwner(i int, op propOp, before, after zoneSets, rep *Report) []propFinding {
	acting := op.actor
	d := diffZones(before, after)
	changed := d.changed()
	var out []propFinding
	violation := func(what string, k endpoint.Key, format string, args ...any) {
		detail := fmt.Sprintf(format, args...)
		detail += fmt.Sprintf("\n  before: %s\n  after:  %s\n  %s sent:\n%s", orGone(before, k), orGone(after, k), acting, renderBatches(rep))
		out = append(out, propFinding{kind: "safety", sig: "safety: " + what, op: i, detail: detail})
	}
	for _, k := range slices.Concat(d.removed, d.modified) {
		verb := "changed"
		if _, ok := after[k]; !ok {
			verb = "deleted"
		}
		if a := r.author[k]; a != acting {
			if verb == "changed" && r.ttlMovedAsAsked(before, after, k) {
				// A shared weighted group every member asks to move: the one change
				// of another's set a publisher makes (changes.WantsTTLLabel).
				continue
			}
			violation(verb+" a set of another writer", k, "%s %s %s, written by %s", acting, verb, k, a)
			continue
		}
		if owner, ok := ownershipOwner(before[k]); ok && owner == acting {
			name, _, isOwnership := r.claimedName(k.Name)
			if isOwnership && !onlyTTLAskChanged(before[k], after[k]) && !slices.ContainsFunc(changed, func(c endpoint.Key) bool {
				return c.Type != endpoint.TypeTXT && c.Name == name && c.SetIdentifier == k.SetIdentifier
			}) {
				violation("own ownership TXT changed without its record", k, "%s %s its ownership record %s, but no record set at %s [%s] changed", acting, verb, k, name, k.SetIdentifier)
			}
		}
	}
	for _, k := range d.removed {
		delete(r.author, k)
	}
	for _, k := range d.added {
		r.author[k] = acting
	}
	// Hijack: an ownership record the sync wrote must not claim a set someone else wrote.
	for _, k := range slices.Concat(d.added, d.modified) {
		if owner, ok := ownershipOwner(after[k]); !ok || owner != acting {
			continue
		}
		name, types, ok := r.claimedName(k.Name)
		if !ok {
			continue
		}
		for _, t := range types {
			c := endpoint.Key{Name: name, Type: t, SetIdentifier: k.SetIdentifier}
			if _, exists := after[c]; exists && r.author[c] != acting {
				violation("ownership record claims a set of another writer", c, "%s wrote ownership record %s, which claims %s, written by %s", acting, k, c, r.author[c])
			}
		}
	}
	return out
}

// claimedName returns the name of the record an ownership TXT name speaks for and the
// types it claims; ok is false for a name no owner of the run writes ownership under.
func (r *propRun) claimedName(txt string) (string, []string, bool) {
	c, ok := r.claims[txt]
	return c.name, c.types, ok
}

// ttlMovedAsAsked reports whether k, another writer's set, changed in nothing but its TTL,
// to the TTL its writer's ownership record (before the sync) asks for.
func (r *propRun) ttlMovedAsAsked(before, after zoneSets, k endpoint.Key) bool {
	var b, a zones.RRSet
	if json.Unmarshal([]byte(before[k]), &b) != nil || json.Unmarshal([]byte(after[k]), &a) != nil || a.TTL == nil || b.TTL == nil {
		return false
	}
	asked := strconv.FormatInt(*a.TTL, 10)
	b.TTL = a.TTL
	bj, _ := json.Marshal(b)
	if aj, _ := json.Marshal(a); string(bj) != string(aj) {
		return false
	}
	for tk, v := range before {
		if tk.Type != endpoint.TypeTXT || tk.SetIdentifier != k.SetIdentifier {
			continue
		}
		if name, _, ok := r.claimedName(tk.Name); !ok || name != k.Name {
			continue
		}
		var t zones.RRSet
		if json.Unmarshal([]byte(v), &t) != nil || len(t.Records) == 0 {
			continue
		}
		if l, err := registry.ParsePayload(t.Records[0]); err == nil && l[changes.WantsTTLLabel] == asked {
			return true
		}
	}
	return false
}

// onlyTTLAskChanged reports whether an ownership record changed in nothing but the TTL
// its source asks for (changes.WantsTTLLabel): recorded while the member carries its
// group's other TTL, for the group's other publishers to read, with no change to the set.
func onlyTTLAskChanged(before, after string) bool {
	var b, a zones.RRSet
	if json.Unmarshal([]byte(before), &b) != nil || json.Unmarshal([]byte(after), &a) != nil || len(b.Records) == 0 || len(a.Records) == 0 {
		return false
	}
	lb, errB := registry.ParsePayload(b.Records[0])
	la, errA := registry.ParsePayload(a.Records[0])
	if errB != nil || errA != nil || lb[changes.WantsTTLLabel] == la[changes.WantsTTLLabel] {
		return false
	}
	delete(lb, changes.WantsTTLLabel)
	delete(la, changes.WantsTTLLabel)
	return maps.Equal(lb, la)
}

// ownershipOwner returns the owner an ownership TXT set names; ok is false for any other set.
func ownershipOwner(rendered string) (string, bool) {
	var s zones.RRSet
	if rendered == "" || json.Unmarshal([]byte(rendered), &s) != nil || s.Type != endpoint.TypeTXT || len(s.Records) == 0 {
		return "", false
	}
	l, err := registry.ParsePayload(s.Records[0])
	if err != nil {
		return "", false
	}
	return l[endpoint.OwnerLabel], true
}

func orGone(z zoneSets, k endpoint.Key) string {
	if v, ok := z[k]; ok {
		return v
	}
	return "(absent)"
}

var (
	reName  = regexp.MustCompile(`(?:\\052)?[a-z0-9*_-]*(?:\.[a-z0-9-]+)*\.example\.com\.?`)
	reSetID = regexp.MustCompile(`(SetIdentifier |set-identifier=')[a-z]+`)
	reZone  = regexp.MustCompile(`\bZ[A-Z0-9]{6,}\b`)
)

// normalizeMessage strips names, set identifiers and zone ids from a Route 53 message, so
// that one cause at different names is one finding.
func normalizeMessage(m string) string {
	m = reName.ReplaceAllString(m, "NAME")
	m = reSetID.ReplaceAllString(m, "${1}ID")
	return reZone.ReplaceAllString(m, "ZONE")
}

// replay runs ops on a fresh sandbox and returns the index of the first finding match
// accepts, or -1.
func replay(tb testing.TB, v ownershipVariant, ops []propOp, match func(propFinding) bool) int {
	r := newPropRun(tb, v)
	defer r.close()
	for i, op := range ops {
		for _, f := range r.step(i, op) {
			if match(f) {
				return i
			}
		}
	}
	return -1
}

// shrinkBudget bounds the replays spent on minimising reproductions.
type shrinkBudget struct {
	replays  int
	deadline time.Time
}

func (b *shrinkBudget) spend() bool {
	if b.replays <= 0 || time.Now().After(b.deadline) {
		return false
	}
	b.replays--
	return true
}

// shrink removes operations from ops (which end with a failing one) while the failure
// stays: chunks of halving size, then single operations (a simple ddmin); then it drops
// the interleaved operation of each operation that has one.
func shrink(tb testing.TB, v ownershipVariant, ops []propOp, match func(propFinding) bool, budget *shrinkBudget) []propOp {
	cur := ops
	for chunk := max(len(cur)/2, 1); ; {
		progress := false
		for start := 0; start < len(cur); {
			end := min(start+chunk, len(cur))
			cand := slices.Concat(cur[:start], cur[end:])
			if len(cand) == 0 {
				break
			}
			if !budget.spend() {
				return cur
			}
			if at := replay(tb, v, cand, match); at >= 0 {
				cur, progress = cand[:at+1], true
				continue
			}
			start = end
		}
		if !progress {
			if chunk == 1 {
				break
			}
			chunk /= 2
		}
	}
	for i := 0; i < len(cur); i++ {
		if cur[i].during == nil {
			continue
		}
		cand := slices.Clone(cur)
		cand[i].during = nil
		if !budget.spend() {
			break
		}
		if at := replay(tb, v, cand, match); at >= 0 {
			cur = cand[:at+1]
		}
	}
	return cur
}

func propSettings(t *testing.T) (seed uint64, ops int) {
	seed, ops = propDefaultSeed, 1000
	if testing.Short() {
		ops = 200
	}
	if s := os.Getenv(propSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", propSeedEnv, s)
		}
		seed = v
	}
	if s := os.Getenv(propOpsEnv); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("%s=%q: want a positive integer", propOpsEnv, s)
		}
		ops = v
	}
	return seed, ops
}

// runProperty runs n random operations from seed and returns them with the findings. It
// stops early once stop (if set) accepts the findings so far.
func runProperty(t *testing.T, v ownershipVariant, seed uint64, n int, stop func([]propFinding) bool) ([]propOp, []propFinding) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x0c0ffee))
	r := newPropRun(t, v)
	defer r.close()
	var ops []propOp
	var findings []propFinding
	for i := range n {
		op := r.next(rng, i)
		ops = append(ops, op)
		findings = append(findings, r.step(i, op)...)
		if stop != nil && stop(findings) {
			t.Logf("stopped after op %d", i)
			break
		}
	}
	s := r.stats
	t.Logf("%d ops (blue %d, green %d, third %d): %d batches applied, %d conflicts reported, %d third-party writes refused by Route 53, %d sets in the zone at the end",
		len(ops), s.ops[actorBlue], s.ops[actorGreen], s.ops[actorThird], s.applied, s.conflicts, s.thirdRejected, len(readZone(t, r.sb, r.zone.ID)))
	for _, sig := range slices.Sorted(maps.Keys(s.refusals)) {
		t.Logf("an owner's change refused by Route 53 (reported as a conflict) %d times: %s\n  first: %s", s.refusals[sig], sig, s.example[sig])
	}
	return ops, findings
}

// TestOwnershipProperty drives two owners and a third party through random operations on
// one zone and checks safety rule 1 after every one of them, and that every sync converges.
func TestOwnershipProperty(t *testing.T) {
	base, n := propSettings(t)
	budget := &shrinkBudget{replays: 400, deadline: time.Now().Add(90 * time.Second)}
	for vi, v := range ownershipVariants {
		t.Run(v.name, func(t *testing.T) {
			seed := base + uint64(vi)
			t.Logf("seed %d (%s=%d replays this run), %d operations", seed, propSeedEnv, base, n)
			ops, findings := runProperty(t, v, seed, n, func(fs []propFinding) bool {
				// A few are enough to report; after the first the zone is no longer what the
				// owners think it is.
				return len(fs) >= 5
			})
			reportPropFindings(t, v, seed, ops, findings, budget)
		})
	}
}

// lossyProvider acknowledges every second change batch without sending it: a write lost
// on the way, which only the next sync can notice.
type lossyProvider struct {
	fullProvider
	n int
}

func (p *lossyProvider) Apply(ctx context.Context, z provider.Zone, b changes.Batch) error {
	if p.n++; p.n%2 == 0 {
		return nil
	}
	return p.fullProvider.Apply(ctx, z, b)
}

// TestOwnershipPropertyNoticesBreakage breaks the system on purpose and checks that the
// property test says so: a property test that cannot fail proves nothing.
func TestOwnershipPropertyNoticesBreakage(t *testing.T) {
	cases := []struct {
		name string
		v    ownershipVariant
		want string // prefix of the finding's signature
	}{
		// Green's controller started with blue's owner id: it takes blue's records for its
		// own and deletes those its sources do not want.
		{"green runs with blue's owner id", ownershipVariant{name: "shared-id", greenID: actorBlue}, "safety: "},
		{"the provider loses every second write", ownershipVariant{name: "lossy", wrap: func(p fullProvider) fullProvider {
			return &lossyProvider{fullProvider: p}
		}}, "not converged"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			found := func(fs []propFinding) bool {
				return slices.ContainsFunc(fs, func(f propFinding) bool { return strings.HasPrefix(f.sig, c.want) })
			}
			_, findings := runProperty(t, c.v, propDefaultSeed, 300, found)
			if !found(findings) {
				t.Errorf("300 operations with %s: no finding %q; got %d others", c.name, c.want, len(findings))
			}
		})
	}
}

// TestSyncForeseesRefusals: what Route 53 would refuse is a conflict before it is sent, so
// that it is reported in the planner's words and costs no call, sync after sync. These
// sequences came out of the property test (where refusals are logged, not failed); in
// each, nobody writes between the sync's listing and its write.
func TestSyncForeseesRefusals(t *testing.T) {
	failover := func(role string) *spec {
		return &spec{kind: kindA, targets: []string{"10.0.0.1"}, ttl: 60, policy: endpoint.FailoverPolicy(role)}
	}
	weighted := &spec{kind: kindA, targets: []string{"10.0.0.1"}, ttl: 60, policy: endpoint.WeightedPolicy(1)}
	manualPrimary := []*endpoint.Endpoint{{Name: "web.example.com", Type: endpoint.TypeA, TTL: 60, SetIdentifier: "manual",
		Policy: endpoint.FailoverPolicy(endpoint.Primary), Targets: endpoint.NewTargets("198.51.100.1")}}
	apexAlias := &spec{kind: kindAlias, targets: []string{"lb1.example.com"}}
	cases := []struct {
		name string
		v    ownershipVariant
		ops  []propOp
	}{{
		// Blue's own set changes policy (DELETE failover + CREATE weighted), but a failover
		// set of the third party stays at the name: Route 53 refuses the weighted set.
		name: "a transition beside another writer's set of the old policy",
		ops: []propOp{
			{actor: actorThird, group: 1, author: actorThird, create: manualPrimary, about: "unowned failover A"},
			{actor: actorBlue, what: "create", name: "web.example.com", spec: failover(endpoint.Secondary)},
			{actor: actorBlue, what: "repolicy", name: "web.example.com", spec: weighted},
		},
	}, {
		// Green holds PRIMARY; blue asks for PRIMARY too: Route 53 takes one of each role.
		name: "a failover role another owner holds",
		ops: []propOp{
			{actor: actorGreen, what: "create", name: "web.example.com", spec: failover(endpoint.Primary)},
			{actor: actorBlue, what: "create", name: "web.example.com", spec: failover(endpoint.Primary)},
		},
	}, {
		// Without a prefix ending in a dot, the apex's ownership record is named
		// "cname-example.com", outside the zone (external-dns issue 449).
		name: "an apex record whose ownership record falls outside the zone",
		v:    ownershipVariant{apex: true},
		ops: []propOp{
			{actor: actorBlue, what: "create", name: propZone, spec: apexAlias},
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newPropRun(t, c.v)
			defer r.close()
			r.strictRefusals = true
			for i, op := range c.ops {
				for _, f := range r.step(i, op) {
					t.Errorf("op %d (%s): %s\n%s", i, op, f.sig, f.detail)
				}
			}
		})
	}
}

// TestOwnershipRegressions replays, without the generator, sequences the property test
// found; each broke safety rule 1 in an earlier planner.
func TestOwnershipRegressions(t *testing.T) {
	simpleA := spec{kind: kindA, targets: []string{"10.0.0.1"}, ttl: 60}
	otherA := spec{kind: kindA, targets: []string{"10.0.0.2"}, ttl: 60}
	alias := spec{kind: kindAlias, targets: []string{"lb1.example.com"}}
	thirdA := []*endpoint.Endpoint{{Name: "app.example.com", Type: endpoint.TypeA, TTL: 300, Targets: endpoint.NewTargets("198.51.100.1")}}
	plainTXT := []*endpoint.Endpoint{{Name: "a-app.example.com", Type: endpoint.TypeTXT, TTL: 300, Targets: endpoint.Targets{`"hello"`}}}
	cases := []struct {
		name string
		ops  []propOp
	}{{
		// The update of a record UPSERTed its ownership record over a TXT record someone
		// else had put at that name.
		name: "an update overwrites a plain TXT record at its ownership name",
		ops: []propOp{
			{actor: actorGreen, what: "create", name: "app.example.com", spec: &alias},
			{actor: actorThird, group: 1, author: actorThird, create: plainTXT, about: "plain TXT at an ownership name"},
			{actor: actorGreen, what: "alias-toggle", name: "app.example.com", spec: &simpleA},
		},
	}, {
		// The same, but the TXT record appears after green listed the zone: the listing
		// cannot warn the planner, only a write that fails when the name is taken can.
		name: "an update from a stale listing overwrites a TXT record written since",
		ops: []propOp{
			{actor: actorGreen, what: "create", name: "app.example.com", spec: &alias},
			{actor: actorGreen, what: "alias-toggle", name: "app.example.com", spec: &simpleA,
				during: &propOp{actor: actorThird, group: 1, author: actorThird, create: plainTXT, about: "plain TXT at an ownership name"}},
		},
	}, {
		// Turning a record into an alias moved its ownership from a- to cname- and left the
		// a- record behind; once the record went, that orphan claimed the next simple A at
		// the name, and blue's next sync deleted the third party's record.
		name: "an orphaned ownership record claims a third party's record",
		ops: []propOp{
			{actor: actorBlue, what: "create", name: "app.example.com", spec: &simpleA},
			{actor: actorBlue, what: "alias-toggle", name: "app.example.com", spec: &alias},
			{actor: actorBlue, what: "delete", name: "app.example.com"},
			{actor: actorThird, group: 1, author: actorThird, create: thirdA, about: "unowned simple A"},
			{actor: actorBlue, what: "create", name: "web.example.com", spec: &otherA},
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newPropRun(t, ownershipVariants[0])
			defer r.close()
			for i, op := range c.ops {
				for _, f := range r.step(i, op) {
					t.Errorf("op %d (%s): %s\n%s", i, op, f.sig, f.detail)
				}
			}
		})
	}
}

// reportPropFindings fails the test with each kind of finding once, its count, and a
// reproduction shrunk to the fewest operations the budget allows.
func reportPropFindings(t *testing.T, v ownershipVariant, seed uint64, ops []propOp, findings []propFinding, budget *shrinkBudget) {
	var sigs []string
	bySig := map[string][]propFinding{}
	for _, f := range findings {
		if _, ok := bySig[f.sig]; !ok {
			sigs = append(sigs, f.sig)
		}
		bySig[f.sig] = append(bySig[f.sig], f)
	}
	// Safety first: it is what the test is for.
	slices.SortStableFunc(sigs, func(a, b string) int {
		return boolRank(strings.HasPrefix(b, "safety")) - boolRank(strings.HasPrefix(a, "safety"))
	})
	for _, sig := range sigs {
		fs := bySig[sig]
		first := fs[0]
		match := func(f propFinding) bool { return f.sig == sig }
		repro := shrink(t, v, ops[:first.op+1], match, budget)
		var b strings.Builder
		for _, op := range repro {
			fmt.Fprintf(&b, "    %s\n", op)
		}
		// The shrunk sequence's own finding, for the record it names.
		detail := first.detail
		rr := newPropRun(t, v)
		for i, op := range repro {
			for _, f := range rr.step(i, op) {
				if f.sig == sig && i == len(repro)-1 {
					detail = f.detail
				}
			}
		}
		rr.close()
		t.Errorf("%s\n  %d times; first at op %d: %s\n  reproduction (%d ops, seed %d):\n%s  finding: %s",
			sig, len(fs), first.op, ops[first.op], len(repro), seed, b.String(), detail)
	}
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}
