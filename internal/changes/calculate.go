package changes

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Registry is what the planner needs of the ownership registry.
type Registry interface {
	// OwnerID is the owner whose records may be changed.
	OwnerID() string
	// Read labels the zone's records with their owners and indexes the ownership records.
	Read(records []*endpoint.Endpoint) registry.Zone
	// For returns the ownership records that accompany an owned record: the
	// registry.TypedForms(rec) type-prefixed ones first, then the optional legacy one.
	For(rec *endpoint.Endpoint) []*endpoint.Endpoint
}

// indexer is a Registry that can label a zone's records with their ownership values
// instead of a map of labels each (registry.TXT.IndexEach): the same plan, for a fraction
// of the allocations, and the zone's records handed over one by one as it reads them.
type indexer interface {
	IndexEach(records []*endpoint.Endpoint, each func(*endpoint.Endpoint)) registry.Zone
}

// TakeOverAdvisor is a Registry that keeps ownership elsewhere than in the zone's TXT
// records (the CRD registry's DNSRecords): the advice of a conflict over a record another
// owner holds, or none, says how owner comes to own it there, not which TXT record to write.
type TakeOverAdvisor interface {
	// TakeOver says how owner comes to own rec, as a clause: "hand it over with …".
	TakeOver(rec *endpoint.Endpoint, owner string) string
}

// Input is everything one zone's plan is computed from.
type Input struct {
	// Desired are the records the sources want in this zone.
	Desired []*endpoint.Endpoint
	// Current is the zone as the provider lists it, ownership TXT records included.
	Current []*endpoint.Endpoint
	// Registry reads and writes ownership.
	Registry Registry
	// Policy limits the kinds of change; "" means sync.
	Policy Policy
	// ManagedTypes are the record types planned; nil means A, AAAA and CNAME.
	ManagedTypes []string
	// Limits bound each batch; the zero value means Route 53's.
	Limits Limits
	// DomainFilter keeps the records, current and desired, whose names it matches; the
	// zero value keeps all. Filtering current records too (after ownership is read, so
	// that a TXT name outside the filter still counts) keeps a sync from deleting owned
	// records that merely fall outside today's --domain-filter, as external-dns does.
	DomainFilter endpoint.DomainFilter
	// Zone is the zone's apex name (normalised); when set, a CNAME wanted at the apex is
	// refused before it is sent, as Route 53 would refuse it.
	Zone string
	// Keep names the objects ("service/default/web") whose input is invalid now: the
	// records they own are kept as they are, never deleted because the object no longer
	// yields them, nor cleared out of the way of another record.
	Keep []string
	// KeepAll keeps every owned record this run would delete: some input could not be
	// read at all, so a record missing from the rest may only be unread.
	KeepAll bool
	// KeepNames keeps the owned records at these names (normalised), each with why: their
	// records move to a more specific zone that could not take them this time, and a name
	// must keep its answer here until its new zone holds it.
	KeepNames map[string]string
}

// Summary counts record changes (ownership records not included).
type Summary struct {
	Create, Update, Delete int
	// Replace counts routing-policy transitions (each one delete plus one create).
	Replace int
	// Held counts changes the policy kept back.
	Held int
	// Kept counts owned records not deleted because their object is invalid now or some
	// input could not be read.
	Kept int
}

// Unit is every change of one DNS name: Route 53 must see them together (a routing-policy
// transition is a DELETE and a CREATE that only work in one batch), so a unit never
// straddles two batches, and a batch the provider refuses can be split back into units
// and retried without the one that is at fault.
type Unit struct {
	// Name is the DNS name whose records the unit changes.
	Name string
	// Changes are the unit's changes in the order they must be applied.
	Changes []Change
	// Resources are the source objects that want (or wanted) the unit's records, for
	// reports: "service/default/app".
	Resources []string
}

// Set is the outcome for one zone.
type Set struct {
	// Batches are applied in order, each atomically.
	Batches []Batch
	// Units are the units of each batch: Batches[i] is Units[i]'s changes in order.
	Units [][]Unit
	// Conflicts are records not written, with why.
	Conflicts []Conflict
	// Notes are records written otherwise than their source asked, with why (e.g. a TTL
	// brought into line with the other members of a weighted group).
	Notes []Conflict
	// Kept are owned records that no source wants now but that were not deleted, because
	// their object is invalid or some input could not be read (Input.Keep, KeepAll).
	Kept []Conflict
	// Summary counts what the batches do.
	Summary Summary
}

// DefaultManagedTypes are the record types planned unless told otherwise, as external-dns.
var DefaultManagedTypes = []string{endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME}

// Calculate plans one zone. The output depends only on the input, never on map order.
func Calculate(in Input) *Set {
	if in.Policy == "" {
		in.Policy = Sync
	}
	if in.Limits == (Limits{}) {
		in.Limits = Route53Limits
	}
	types := in.ManagedTypes
	if types == nil {
		types = DefaultManagedTypes
	}
	filtered := len(in.DomainFilter.Include)+len(in.DomainFilter.Exclude) > 0
	defaultTypes := slices.Equal(types, DefaultManagedTypes)
	managed := func(e *endpoint.Endpoint) bool {
		if defaultTypes {
			// The common case, checked for every record of the zone three times over.
			switch e.Type {
			case endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME:
			default:
				return false
			}
		} else if !slices.Contains(types, e.Type) {
			return false
		}
		return !filtered || in.DomainFilter.Match(e.Name)
	}

	var (
		zone      registry.Zone
		current   []*endpoint.Endpoint
		atName    nameIndex
		authority []*endpoint.Endpoint
	)
	if ix, ok := in.Registry.(indexer); ok && fastPaths && !slices.Contains(types, endpoint.TypeTXT) {
		// No TXT record is planned, so no ownership record: the records the planner walks
		// are the managed ones of the zone as listed, and they and the name index are
		// built while the registry reads each record (one pass over the zone, not three).
		// Sized as the separate passes size them: about one ownership record per record.
		cur := keyOrder{out: make([]*endpoint.Endpoint, 0, len(in.Current)/2)}
		names := nameIndexer{list: make([]*endpoint.Endpoint, 0, len(in.Current)/2)}
		zone = ix.IndexEach(in.Current, func(e *endpoint.Endpoint) {
			m := managed(e)
			if m {
				cur.add(e)
			}
			names.add(e, m)
		})
		current = cur.sorted()
		atName, authority = names.index()
	} else {
		if ix, ok := in.Registry.(indexer); ok {
			zone = ix.IndexEach(in.Current, nil)
		} else {
			zone = in.Registry.Read(in.Current)
		}
		current = sortedManaged(zone.Records, managed)
		atName, authority = newNameIndex(in.Current, managed)
	}
	p := &Set{}
	desired := sortedManaged(in.Desired, managed)

	pl := planner{owner: in.Registry.OwnerID(), policy: in.Policy, reg: in.Registry, legacy: zone.LegacyOnly,
		plan: p, managed: managed, apex: endpoint.NormalizeName(in.Zone),
		keep: in.Keep, keepAll: in.KeepAll, keepNames: in.KeepNames, other: zone.Other, atName: atName}
	pl.held = registry.Holds(authority)
	var units []Unit
	// Both lists are sorted by name: walk them together, one name at a time.
	for i, j := 0, 0; i < len(current) || j < len(desired); {
		var name string
		switch {
		case i == len(current):
			name = desired[j].Name
		case j == len(desired):
			name = current[i].Name
		default:
			name = min(current[i].Name, desired[j].Name)
		}
		i2, j2 := i, j
		for i2 < len(current) && current[i2].Name == name {
			i2++
		}
		for j2 < len(desired) && desired[j2].Name == name {
			j2++
		}
		g := group{current: current[i:i2], desired: desired[j:j2]}
		if fastPaths && pl.unchanged(&g) {
			// Most names of a large zone: nothing to plan, and unit would find as much.
			i, j = i2, j2
			continue
		}
		g.prepare(p)
		if u := pl.unit(&g); len(u.Changes) > 0 {
			units = append(units, u)
		}
		i, j = i2, j2
	}
	batches, tooBig := Pack(units, in.Limits)
	for _, b := range batches {
		p.Batches = append(p.Batches, Changes(b))
	}
	p.Units = batches
	for _, u := range tooBig {
		p.Conflicts = append(p.Conflicts, Conflict{
			Key:    u.Changes[0].Endpoint.Key(),
			Reason: fmt.Sprintf("the %d changes for this name exceed one change batch (%d values, %d value characters)", len(u.Changes), in.Limits.MaxRecords, in.Limits.MaxValueChars),
			Advice: "split the records across names; crossfade never splits one name's changes across batches",
		})
	}
	byKey := func(a, b Conflict) int { return compareKeys(a.Key, b.Key) }
	slices.SortStableFunc(p.Conflicts, byKey)
	slices.SortStableFunc(p.Notes, byKey)
	slices.SortStableFunc(p.Kept, byKey)
	return p
}

func compareKeys(a, b endpoint.Key) int {
	// Not cmp.Or, which compares all three: sorting 100,000 names mostly stops at the first.
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	if c := strings.Compare(a.Type, b.Type); c != 0 {
		return c
	}
	return strings.Compare(a.SetIdentifier, b.SetIdentifier)
}

// chooseDesired picks one record when several sources want the same record set. Equal
// wishes merge silently; different ones are a conflict, and, as external-dns does, the
// source that already holds the record keeps it, else the smallest targets win.
func chooseDesired(cands []*endpoint.Endpoint, cur *endpoint.Endpoint) (*endpoint.Endpoint, *Conflict) {
	slices.SortFunc(cands, func(a, b *endpoint.Endpoint) int {
		return cmp.Or(slices.Compare(a.Targets, b.Targets), cmp.Compare(a.Resource(), b.Resource()))
	})
	first := cands[0]
	same := true
	for _, c := range cands[1:] {
		if !c.SameRecord(first) {
			same = false
			break
		}
	}
	if same {
		return first, nil
	}
	chosen := first
	if cur != nil {
		for _, c := range cands {
			if c.Resource() != "" && c.Resource() == cur.Resource() {
				chosen = c
				break
			}
		}
	}
	msg := "sources disagree:"
	for _, c := range cands {
		msg += fmt.Sprintf(" %s wants %s;", cmp.Or(c.Resource(), "a source"), describe(c))
	}
	return chosen, &Conflict{
		Key:    first.Key(),
		Reason: msg + " publishing " + cmp.Or(chosen.Resource(), "the first"),
		Advice: "give each source its own name or set identifier, or make them agree",
	}
}

// group is everything at one DNS name: a handful of record sets, so slices searched
// linearly beat per-name maps.
type group struct {
	current []*endpoint.Endpoint
	desired []*endpoint.Endpoint
}

// sortedManaged returns the records of managed types sorted by key; the sort is stable so
// that equal keys keep their input order.
func sortedManaged(in []*endpoint.Endpoint, managed func(*endpoint.Endpoint) bool) []*endpoint.Endpoint {
	o := keyOrder{out: make([]*endpoint.Endpoint, 0, len(in))}
	for _, e := range in {
		if managed(e) {
			o.add(e)
		}
	}
	return o.sorted()
}

// keyOrder collects records and sorts them by key, stably. Zones are listed sorted, and
// sources mostly yield sorted records: whether a sort is needed is seen as they are
// added, while each record is at hand.
type keyOrder struct {
	out      []*endpoint.Endpoint
	unsorted bool
}

func (o *keyOrder) add(e *endpoint.Endpoint) {
	if !o.unsorted && len(o.out) > 0 && compareKeys(o.out[len(o.out)-1].Key(), e.Key()) > 0 {
		o.unsorted = true
	}
	o.out = append(o.out, e)
}

// sorted returns the records added, sorted by key.
func (o *keyOrder) sorted() []*endpoint.Endpoint {
	if o.unsorted {
		slices.SortStableFunc(o.out, func(a, b *endpoint.Endpoint) int { return compareKeys(a.Key(), b.Key()) })
	}
	return o.out
}

// prepare leaves one desired record per key (the group is sorted by key), reporting
// sources that disagree.
func (g *group) prepare(p *Set) {
	if len(g.desired) < 2 {
		return
	}
	out := g.desired[:0]
	for i := 0; i < len(g.desired); {
		j := i + 1
		for j < len(g.desired) && g.desired[j].Key() == g.desired[i].Key() {
			j++
		}
		d := g.desired[i]
		if j-i > 1 {
			var c *Conflict
			d, c = chooseDesired(slices.Clone(g.desired[i:j]), g.find(g.current, d.Key()))
			if c != nil {
				p.Conflicts = append(p.Conflicts, *c)
			}
		}
		out = append(out, d)
		i = j
	}
	g.desired = out
}

// find returns the record with key in list, or nil.
func (g *group) find(list []*endpoint.Endpoint, key endpoint.Key) *endpoint.Endpoint {
	for _, e := range list {
		if e.Key() == key {
			return e
		}
	}
	return nil
}

type planner struct {
	owner  string
	policy Policy
	reg    Registry
	legacy map[endpoint.Key]bool
	// held maps a name and type (no set identifier) to the authority record of the
	// cutover holding its weights.
	held map[endpoint.Key]registry.Authority
	plan *Set
	// managed says whether a record's type and name are the planner's to change.
	managed func(*endpoint.Endpoint) bool
	// apex is the zone's name, "" when unknown.
	apex string
	// other are the "a-" ownership records read for alias A records (registry.Zone.Other):
	// deleted with their record, like every form read.
	other map[endpoint.Key]*endpoint.Endpoint
	// keep and keepAll are Input.Keep and Input.KeepAll.
	keep      []string
	keepAll   bool
	keepNames map[string]string
	// ttlBuf and askBuf are groupTTLs' buffers.
	ttlBuf []groupTTL
	askBuf []memberAsk
	// atName indexes every record of the zone, of any type and owner, by name: Route 53
	// refuses a CNAME beside any of them, and the owned-or-absent check must see a user's
	// TXT record where an ownership record would go.
	atName nameIndex
}

// holdWeight keeps what a cutover wrote (safety rule 3): while a cutover holds the weights
// of d's name and type, an existing weighted member keeps its current weight (and TTL,
// which a cutover may lower for its duration) whatever the source says. A source that
// pins another weight is reported, not obeyed; everything else about the record is
// still published; a member the zone lacks is created at weight 0 (joinHeld). Every
// weighted record of a held name carries the hold's id in its ownership record
// (endpoint.ConfirmsHoldLabel), whether or not the weights agree: that is the
// publisher's confirmation, which `cutover release` waits for, that it has read
// the zone since the hold began and recorded what its source asks for.
func (pl *planner) holdWeight(d, cur *endpoint.Endpoint) *endpoint.Endpoint {
	if d.Policy.Kind != endpoint.Weighted {
		return d
	}
	a, ok := pl.held[endpoint.Key{Name: d.Name, Type: d.Type}]
	if !ok {
		return d
	}
	held := d.Clone()
	if held.Labels == nil {
		held.Labels = endpoint.Labels{}
	}
	held.Labels[endpoint.ConfirmsHoldLabel] = a.HoldID()
	if cur == nil || cur.Policy.Kind != endpoint.Weighted {
		return pl.joinHeld(held, a)
	}
	if d.Policy.Weight != cur.Policy.Weight {
		pl.plan.Conflicts = append(pl.plan.Conflicts, Conflict{
			Key:    d.Key(),
			Reason: fmt.Sprintf("held by cutover %s: the source asks for weight %d, the zone holds %d%s", a.Cutover, d.Policy.Weight, cur.Policy.Weight, wantedBy(d)),
			Advice: fmt.Sprintf("the weight stays %d; set the source's weight to %d before `crossfade cutover release` hands the weights back, or release will refuse", cur.Policy.Weight, cur.Policy.Weight),
		})
		// Recorded in the ownership record, for release to compare.
		held.Labels[endpoint.WantsWeightLabel] = strconv.FormatInt(d.Policy.Weight, 10)
	}
	if d.Policy.Weight != cur.Policy.Weight || (d.TTL.IsConfigured() && d.TTL != cur.TTL) {
		held.Policy.Weight, held.TTL = cur.Policy.Weight, cur.TTL
	}
	return held
}

// joinHeld creates a weighted member that is not in the zone (deleted by another writer,
// or a new cluster's) at weight 0 while a cutover holds its name: any other weight would
// move traffic that only the cutover moves (safety rule 3), and weight 0 takes none while
// another member has a weight. The weight its source asks for is recorded in the
// ownership record, as for a held member whose source disagrees, and reported; the
// cutover writes the member's weight itself at its next step, resume or rollback.
func (pl *planner) joinHeld(held *endpoint.Endpoint, a registry.Authority) *endpoint.Endpoint {
	if held.Policy.Weight == 0 {
		return held
	}
	pl.plan.Conflicts = append(pl.plan.Conflicts, Conflict{
		Key: held.Key(),
		Reason: fmt.Sprintf("held by cutover %s: the member is not in the zone and is created at weight 0 while the cutover holds the weights; the source asks for %d%s",
			a.Cutover, held.Policy.Weight, wantedBy(held)),
		Advice: "the cutover writes this member's weight at its next step (`crossfade cutover resume` after a pause, or its rollback); " +
			"set the source's weight to the one the zone holds before `crossfade cutover release` hands the weights back, or release will refuse",
	})
	held.Labels[endpoint.WantsWeightLabel] = strconv.FormatInt(held.Policy.Weight, 10)
	held.Policy.Weight = 0
	return held
}

// heldMember returns the cutover holding cur, a weighted record set, and whether one does.
func (pl *planner) heldMember(cur *endpoint.Endpoint) (registry.Authority, bool) {
	if cur.Policy.Kind != endpoint.Weighted {
		return registry.Authority{}, false
	}
	a, ok := pl.held[endpoint.Key{Name: cur.Name, Type: cur.Type}]
	return a, ok
}

// isHeld reports whether a cutover holds e, a weighted record set.
func (pl *planner) isHeld(e *endpoint.Endpoint) bool {
	_, ok := pl.heldMember(e)
	return ok
}

// heldAway is the conflict of a record that would replace or displace cur, a weighted
// member a cutover holds: the member stays while the hold lasts.
func heldAway(cur, want *endpoint.Endpoint, a registry.Authority) Conflict {
	return Conflict{
		Key: want.Key(),
		Reason: fmt.Sprintf("held by cutover %s: it would replace the weighted member %s (weight %d), which stays while the cutover holds the weights%s",
			a.Cutover, describe(cur), cur.Policy.Weight, wantedBy(want)),
		Advice: "finish the cutover and `crossfade cutover release` its weights; the next sync then writes this record",
	}
}

// keepHeld keeps an owned weighted member that no source asks for any more while a
// cutover holds its name (safety rule 3: the cutover may still be moving traffic through
// it, and deleting it would leave the cutover's weights pointing at nothing). Its
// ownership record confirms the hold and, under the sync policy, records that its source
// wants none of it (endpoint.WantsNone), so that `cutover release` says the member goes
// at the publisher's next sync, and refuses it without --force.
func (pl *planner) keepHeld(b *builder, cur *endpoint.Endpoint, a registry.Authority) {
	pl.plan.Summary.Held++
	what := "it stays as it is while the cutover holds the weights"
	if pl.policy == Sync {
		what += ", and goes at the first sync after `crossfade cutover release` hands them back"
	}
	pl.plan.Conflicts = append(pl.plan.Conflicts, Conflict{
		Key:      cur.Key(),
		Reason:   fmt.Sprintf("held by cutover %s: no source asks for this member any more (weight %d in the zone, published by %s); %s", a.Cutover, cur.Policy.Weight, cmp.Or(cur.Resource(), "an object of owner "+pl.owner), what),
		Advice:   "if the member should stay, publish it again; release refuses to hand the weights back while a member would go, unless --force",
		Resource: cur.Resource(),
	})
	if pl.policy == CreateOnly {
		return
	}
	want := pl.owned(cur)
	want.Labels[endpoint.ConfirmsHoldLabel] = a.HoldID()
	if pl.policy == Sync {
		want.Labels[endpoint.WantsWeightLabel] = endpoint.WantsNone
	} else {
		// Upsert-only never deletes it: handing the weights back changes nothing here.
		delete(want.Labels, endpoint.WantsWeightLabel)
	}
	if maps.Equal(want.Labels, cur.AllLabels()) && !pl.legacy[cur.Key()] {
		return
	}
	m := b.mark()
	if c := pl.ownership(b, want, false); c != nil {
		b.reset(m)
		pl.plan.Conflicts = append(pl.plan.Conflicts, *c)
	}
}

// owned returns a copy of d labelled with this owner.
func (pl *planner) owned(d *endpoint.Endpoint) *endpoint.Endpoint {
	want := d.Clone()
	if want.Labels == nil {
		want.Labels = endpoint.Labels{}
	}
	want.Labels[endpoint.OwnerLabel] = pl.owner
	return want
}

// ours reports whether a TXT record is an ownership record of this owner; a TXT record
// that is not an ownership record at all (an SPF value, a cutover's authority record)
// is nobody's to change.
func (pl *planner) ours(t *endpoint.Endpoint) bool { return mustOwner(t) == pl.owner }

// builder collects one unit's changes. Every replacement is a DELETE of the set exactly as
// read plus a CREATE, never an UPSERT: Route 53 refuses a DELETE that does not match
// every field, so a set that anyone changed since the zone was listed (a cutover step, a
// second controller, a person) makes the batch fail instead of being overwritten. That is
// the only compare-and-swap Route 53 offers.
type builder struct {
	dels, creates []Change
	gone          keySet // sets the unit deletes
}

func (b *builder) delete(e *endpoint.Endpoint) {
	// A change's readers (providers, reports) expect the record's Labels.
	e.FillLabels()
	b.dels = append(b.dels, Change{Delete, e})
	b.gone.add(e.Key())
}

func (b *builder) create(e *endpoint.Endpoint) { b.creates = append(b.creates, Change{Create, e}) }

// mark and reset undo what was built for a record that turns out to conflict.
type mark struct{ dels, creates, gone int }

func (b *builder) mark() mark { return mark{len(b.dels), len(b.creates), len(b.gone)} }

func (b *builder) reset(m mark) {
	b.dels, b.creates, b.gone = b.dels[:m.dels], b.creates[:m.creates], b.gone[:m.gone]
}

// unit plans one name: every DELETE first, then every CREATE, so that Route 53, which
// checks each change against the state the earlier ones leave, accepts a transition, a
// replacement and a change of a weighted group's TTL in one batch.
func (pl *planner) unit(g *group) Unit {
	var b builder
	var kept keySet // owned sets a conflicting record would have replaced
	conflict := func(c Conflict) { pl.plan.Conflicts = append(pl.plan.Conflicts, c) }
	ttls := pl.groupTTLs(g)

	for _, d := range g.desired {
		cur := g.find(g.current, d.Key())
		d = pl.holdWeight(d, cur)
		d = pl.fitTTL(d, ttls)
		if cur != nil && cur.Owner() == pl.owner && cur.Policy.Kind == d.Policy.Kind && d.SameRecord(cur) {
			// Unchanged; only a zone written by an older external-dns, with the legacy
			// ownership form alone, still needs its type-prefixed record, and a held
			// member's ownership record the weight its source asks for now and the hold
			// it has seen (or, the hold over, neither).
			if (pl.legacy[cur.Key()] || plannerLabelsDiffer(cur, d)) && pl.policy != CreateOnly {
				m := b.mark()
				if c := pl.ownership(&b, pl.owned(d), false); c != nil {
					b.reset(m)
					conflict(*c)
				}
			}
			continue
		}
		want := pl.owned(d)
		m := b.mark()
		var c *Conflict
		switch {
		case cur != nil && cur.Owner() != pl.owner:
			c = ptr(notOwned(cur, want, pl.reg.For(want)[0].Name, pl.owner))
			if a, ok := pl.reg.(TakeOverAdvisor); ok {
				c.Advice = fmt.Sprintf("if %s should own it, %s, or remove it, then sync again; otherwise give this member its own set identifier", pl.owner, a.TakeOver(cur, pl.owner))
			}
		case cur != nil && pl.policy == CreateOnly:
			pl.plan.Summary.Held++
			continue
		case cur != nil && cur.Policy.Kind != want.Policy.Kind && pl.isHeld(cur):
			c = ptr(heldAway(cur, want, pl.held[endpoint.Key{Name: cur.Name, Type: cur.Type}]))
		case cur != nil:
			if want.TTL == 0 {
				want.TTL = cur.TTL
			}
			// Route 53 will not turn one routing policy into another in place; within one
			// policy the set is replaced the same way, so that it fails if it moved.
			pl.deleteWithTXT(&b, cur, want)
			// A new routing policy (or failover role) may meet another writer's set.
			if _, c = pl.clearWay(&b, g, want); c != nil {
				break
			}
			b.create(want)
			if c = pl.ownership(&b, want, true); c == nil {
				if cur.Policy.Kind != want.Policy.Kind {
					pl.plan.Summary.Replace++
				} else {
					pl.plan.Summary.Update++
				}
			}
		default:
			var replaced int
			if replaced, c = pl.clearWay(&b, g, want); c == nil {
				b.create(want)
				if c = pl.ownership(&b, want, true); c == nil {
					pl.plan.Summary.Create++
					pl.plan.Summary.Replace += replaced
				}
			}
		}
		if c != nil {
			b.reset(m)
			if c.Key != (endpoint.Key{}) {
				conflict(*c)
			}
			// What want would have replaced stays: a name keeps its answer until its
			// replacement can be written.
			for _, bl := range pl.blockers(&b, g, want) {
				kept.add(bl.Key())
			}
		}
	}

	for _, cur := range g.current {
		key := cur.Key()
		if cur.Owner() != pl.owner || g.find(g.desired, key) != nil || b.gone.has(key) {
			continue
		}
		if a, ok := pl.heldMember(cur); ok && pl.kept(cur) == "" {
			// Held, whether or not a wanted record stood in its way: it stays.
			pl.keepHeld(&b, cur, a)
			continue
		}
		if kept.has(key) {
			continue
		}
		if pl.policy != Sync {
			pl.plan.Summary.Held++
			continue
		}
		if why, moving := pl.keepNames[cur.Name]; moving {
			pl.plan.Summary.Kept++
			pl.plan.Kept = append(pl.plan.Kept, Conflict{Key: key, Reason: "not deleted: " + why,
				Advice: "fix what keeps the name from its new zone; it is deleted here once that zone holds it"})
			continue
		}
		if why := pl.kept(cur); why != "" {
			pl.plan.Summary.Kept++
			pl.plan.Kept = append(pl.plan.Kept, Conflict{Key: key, Reason: "not deleted: " + why,
				Advice: "fix the object (or the input that could not be read); deleting the object itself deletes its records"})
			continue
		}
		pl.deleteWithTXT(&b, cur, nil)
		pl.plan.Summary.Delete++
	}
	pl.moveOthers(&b, g, ttls)
	u := Unit{Name: g.name(), Changes: slices.Concat(b.dels, b.creates)}
	if len(u.Changes) > 0 {
		u.Resources = g.resources(pl.owner)
	}
	return u
}

func ptr[T any](v T) *T { return &v }

// fastPaths enables the planner's shortcuts for the common case (unchanged, and the zone
// walked while the registry reads it); tests turn them off to check that the general
// path plans the same.
var fastPaths = true

// unchanged reports whether g is one owned record set that its one source wants exactly
// as it is, with nothing to rewrite in its ownership record: most of a large zone. unit
// plans nothing for such a group, which this says for a fraction of the cost: with one
// desired and one current set of the same key there is no group TTL to agree on
// (groupTTLs), nothing to clear or delete, and a weighted set is only changed by a hold
// (holdWeight), which sends it down the general path.
func (pl *planner) unchanged(g *group) bool {
	if len(g.desired) != 1 || len(g.current) != 1 {
		return false
	}
	d, cur := g.desired[0], g.current[0]
	if d.Policy.Kind == endpoint.Weighted && len(pl.held) > 0 {
		if _, held := pl.held[endpoint.Key{Name: d.Name, Type: d.Type}]; held {
			return false
		}
	}
	if cur.Policy.Kind != d.Policy.Kind || !d.SameRecord(cur) || cur.Owner() != pl.owner {
		return false
	}
	return pl.policy == CreateOnly || (!pl.legacy[cur.Key()] && !plannerLabelsDiffer(cur, d))
}

// plannerLabelPart is what the keys of the labels the planner itself writes have in
// common (endpoint.WantsWeightLabel, WantsTTLLabel, endpoint.ConfirmsHoldLabel).
const plannerLabelPart = "crossfade-"

// plannerLabelsDiffer reports whether cur's ownership record states another weight, TTL or
// hold than d asks it to: then it is rewritten although the record is unchanged. Most
// records carry none of these labels, which one scan of cur's ownership value tells.
func plannerLabelsDiffer(cur, d *endpoint.Endpoint) bool {
	if !cur.MayCarryLabel(plannerLabelPart) {
		if _, onlyResource := d.Labels[endpoint.ResourceLabel]; len(d.Labels) == 1 && onlyResource {
			// What a source's record carries: none of the planner's labels.
			return false
		}
		return d.Label(endpoint.WantsWeightLabel) != "" || d.Label(WantsTTLLabel) != "" || d.Label(endpoint.ConfirmsHoldLabel) != ""
	}
	return cur.Label(endpoint.WantsWeightLabel) != d.Label(endpoint.WantsWeightLabel) ||
		cur.Label(WantsTTLLabel) != d.Label(WantsTTLLabel) ||
		cur.Label(endpoint.ConfirmsHoldLabel) != d.Label(endpoint.ConfirmsHoldLabel)
}

// kept says why an owned record must stay although no source wants it, "" when it may go.
func (pl *planner) kept(cur *endpoint.Endpoint) string {
	if r := cur.Resource(); r != "" && slices.Contains(pl.keep, r) {
		return fmt.Sprintf("its object %s is invalid now, and what it published stays until it is fixed", r)
	}
	if pl.keepAll {
		return "some input could not be read, so no record is deleted in this run"
	}
	return ""
}

// nameIndex finds a zone's records by name: every TXT record (ownership records included)
// and every record the planner does not manage. When the zone lists them in order of
// name (as Route 53 lists a zone whose names share their parent labels), the list itself
// is searched: nothing to build. Otherwise nearly every name holds one record set, so
// those live in a plain map and only the others get a slice: a zone of 200,000 sets costs
// two map inserts' worth, not 200,000 slices.
type nameIndex struct {
	// sorted holds the records in the order listed, names non-decreasing; nil when they
	// are not (or there are none), and the maps hold them.
	sorted []*endpoint.Endpoint
	one    map[string]*endpoint.Endpoint
	more   map[string][]*endpoint.Endpoint
}

// newNameIndex indexes records by name. It also returns, in order, the records that may
// be a cutover's authority records (registry.Holds reads them): one walk over a large
// zone instead of two.
func newNameIndex(records []*endpoint.Endpoint, managed func(*endpoint.Endpoint) bool) (nameIndex, []*endpoint.Endpoint) {
	x := nameIndexer{list: make([]*endpoint.Endpoint, 0, len(records)/2)}
	for _, e := range records {
		x.add(e, managed(e))
	}
	return x.index()
}

// nameIndexer builds a nameIndex from a zone's records in the order listed.
type nameIndexer struct {
	authority []*endpoint.Endpoint
	list      []*endpoint.Endpoint
	unsorted  bool
}

// add takes the zone's next record; managed is whether the planner manages it.
func (x *nameIndexer) add(e *endpoint.Endpoint, managed bool) {
	if e.Type == endpoint.TypeTXT && registry.IsAuthorityName(e.Name) {
		x.authority = append(x.authority, e)
	}
	if managed && e.Type != endpoint.TypeTXT {
		// The planner walks these name by name (group.current) already.
		return
	}
	if !x.unsorted && len(x.list) > 0 && x.list[len(x.list)-1].Name > e.Name {
		x.unsorted = true
	}
	x.list = append(x.list, e)
}

// index returns the index of the records added, and the records that may be a cutover's
// authority records, in order.
func (x *nameIndexer) index() (nameIndex, []*endpoint.Endpoint) {
	if !x.unsorted {
		return nameIndex{sorted: x.list}, x.authority
	}
	return mapIndex(x.list), x.authority
}

// mapIndex indexes list, in any order, in maps.
func mapIndex(list []*endpoint.Endpoint) nameIndex {
	x := nameIndex{one: make(map[string]*endpoint.Endpoint, len(list)), more: map[string][]*endpoint.Endpoint{}}
	for _, e := range list {
		if l, ok := x.more[e.Name]; ok {
			x.more[e.Name] = append(l, e)
		} else if first, ok := x.one[e.Name]; ok {
			delete(x.one, e.Name)
			x.more[e.Name] = []*endpoint.Endpoint{first, e}
		} else {
			x.one[e.Name] = e
		}
	}
	return x
}

// at returns the records at name, in the order listed. The caller must not change the
// slice.
func (x nameIndex) at(name string) []*endpoint.Endpoint {
	if x.sorted != nil {
		i, _ := slices.BinarySearchFunc(x.sorted, name, func(e *endpoint.Endpoint, n string) int { return strings.Compare(e.Name, n) })
		j := i
		for j < len(x.sorted) && x.sorted[j].Name == name {
			j++
		}
		return x.sorted[i:j:j]
	}
	if e, ok := x.one[name]; ok {
		return []*endpoint.Endpoint{e}
	}
	return x.more[name]
}

// find returns the record set with key (the first listed), or nil.
func (x nameIndex) find(key endpoint.Key) *endpoint.Endpoint {
	for _, e := range x.at(key.Name) {
		if e.Key() == key {
			return e
		}
	}
	return nil
}

// clearWay deletes the owned record sets at want's name beside which Route 53 refuses
// want (a routing-policy transition across keys, a CNAME replacing an A), and returns a
// conflict when anything else stands in the way: a set of another owner or of none, a
// set of a type crossfade does not manage, one the sources also want, or one a
// create-only policy keeps. A zero-keyed conflict means "held by policy", counted, not
// reported.
func (pl *planner) clearWay(b *builder, g *group, want *endpoint.Endpoint) (int, *Conflict) {
	if want.Type == endpoint.TypeCNAME && want.Name == pl.apex && pl.apex != "" {
		return 0, &Conflict{Key: want.Key(), Reason: "Route 53 does not allow a CNAME at the zone apex" + wantedBy(want),
			Advice: `publish an alias instead (the alias: "true" annotation), or a name below the apex`}
	}
	replaced := 0
	for _, bl := range pl.blockers(b, g, want) {
		if pl.managed(bl) && bl.Owner() == pl.owner && g.find(g.desired, bl.Key()) == nil && pl.policy != CreateOnly && pl.kept(bl) == "" && !pl.isHeld(bl) {
			pl.deleteWithTXT(b, bl, nil)
			replaced++
		}
	}
	for _, bl := range pl.blockers(b, g, want) {
		switch d := g.find(g.desired, bl.Key()); {
		case pl.managed(bl) && d != nil:
			return 0, &Conflict{Key: want.Key(), Reason: fmt.Sprintf("sources want both %s and %s, which Route 53 cannot hold together", describe(want), describe(d)), Advice: "give every member of the name the same routing policy"}
		case pl.managed(bl) && bl.Owner() == pl.owner && pl.policy == CreateOnly:
			pl.plan.Summary.Held++
			return 0, &Conflict{}
		case pl.managed(bl) && bl.Owner() == pl.owner && pl.isHeld(bl):
			return 0, ptr(heldAway(bl, want, pl.held[endpoint.Key{Name: bl.Name, Type: bl.Type}]))
		case pl.managed(bl) && bl.Owner() == pl.owner && pl.kept(bl) != "":
			return 0, &Conflict{Key: want.Key(), Reason: fmt.Sprintf("would replace %s, which is kept: %s%s", describe(bl), pl.kept(bl), wantedBy(want)),
				Advice: "fix the object that published it, or remove it from the zone"}
		case !pl.managed(bl):
			return 0, &Conflict{Key: want.Key(),
				Reason: fmt.Sprintf("cannot be created beside the existing %s, a type crossfade does not manage here%s", describe(bl), wantedBy(want)),
				Advice: "Route 53 holds no other record beside a CNAME at one name: remove that record, or publish an alias A (the alias annotation) instead of a CNAME"}
		default:
			c := blocked(bl, want, pl.owner, pl.reg.For(bl)[0].Name)
			if a, ok := pl.reg.(TakeOverAdvisor); ok {
				c.Advice = fmt.Sprintf("to convert it, either %s, so that the next sync replaces it atomically, or delete it and create the new record in one change batch yourself", a.TakeOver(bl, pl.owner))
			}
			return 0, &c
		}
	}
	return replaced, nil
}

// blockers are the record sets at want's name, of any type and owner, beside which
// Route 53 refuses want and which the unit does not delete yet: sets of the same type
// under another routing policy, and anything beside a CNAME.
func (pl *planner) blockers(b *builder, g *group, want *endpoint.Endpoint) []*endpoint.Endpoint {
	var out []*endpoint.Endpoint
	others := pl.atName.at(want.Name)
	for i, c := range slices.Concat(g.current, others) {
		if c.Key() == want.Key() || b.gone.has(c.Key()) || (i >= len(g.current) && slices.Contains(g.current, c)) {
			continue
		}
		switch {
		case (c.Type == endpoint.TypeCNAME) != (want.Type == endpoint.TypeCNAME):
			out = append(out, c)
		case c.Type == want.Type && clash(c.Policy, want.Policy):
			out = append(out, c)
		}
	}
	return out
}

// clash reports whether Route 53 refuses two sets of one name and type with these
// policies beside each other: different routing policies, or one failover role twice.
func clash(a, b endpoint.RoutingPolicy) bool {
	return a.Kind != b.Kind || (a.Kind == endpoint.Failover && a.Role == b.Role)
}

// kindOf names a policy for messages: its kind, and a failover set's role.
func kindOf(p endpoint.RoutingPolicy) string {
	if p.Kind == endpoint.Failover {
		return p.String()
	}
	return p.Kind.String()
}

// deleteWithTXT deletes an owned record exactly as listed, and those of its ownership
// records that exist and are ours, except where keep (the record replacing it, or nil)
// writes its own ownership record under the same key: ownership then replaces it.
func (pl *planner) deleteWithTXT(b *builder, cur, keep *endpoint.Endpoint) {
	b.delete(cur)
	var kept []endpoint.Key
	if keep != nil {
		for _, t := range pl.reg.For(keep) {
			kept = append(kept, t.Key())
		}
	}
	for _, t := range pl.reg.For(cur) {
		if have := pl.atName.find(t.Key()); have != nil && !b.gone.has(t.Key()) && !slices.Contains(kept, t.Key()) && pl.ours(have) {
			b.delete(have)
		}
	}
	if o := pl.other[cur.Key()]; o != nil && !b.gone.has(o.Key()) && !slices.Contains(kept, o.Key()) && pl.ours(o) {
		b.delete(o)
	}
}

// ownership writes want's ownership records. It is the one owned-or-absent check that
// guards every write of an ownership record (create, update, replacement, alias change,
// the legacy form): a record is created where no TXT record stands (or the unit deletes
// it), replaced only where the one standing is this owner's, and left alone where it is
// already right. Anything else there (another owner's record, a TXT record that is not an
// ownership record, a TXT record of the other routing policy that is not ours) is a
// conflict, and nothing of want is written. The optional legacy same-name form is only
// left out, with a note, where such a record stands.
//
// When the unit also writes the record itself (recheck), an ownership record that is
// already right is rewritten as it was read (DELETE exactly as read, CREATE the same):
// the batch then lands only if the zone still says this owner owns the name. Without
// it, a write planned from an out-of-date view of the zone (a controller's cache, a
// listing another writer raced) could replace a record whose ownership was handed to
// another owner in between, since the record's own DELETE still matches.
func (pl *planner) ownership(b *builder, want *endpoint.Endpoint, recheck bool) *Conflict {
	// Every type-prefixed form marks the record owned for some release (an alias A's
	// "cname-" and "a-"): each is written or nothing is.
	typed := registry.TypedForms(want)
	for i, t := range pl.reg.For(want) {
		legacy := i >= typed
		c := pl.ownershipRecord(b, t, recheck)
		switch {
		case c == nil:
		case legacy:
			pl.plan.Notes = append(pl.plan.Notes, Conflict{Key: want.Key(),
				Reason: "its legacy same-name ownership record is not written: " + c.Reason,
				Advice: "the type-prefixed ownership record still marks the record as owned; remove the other TXT record to have both"})
		default:
			return &Conflict{Key: want.Key(), Reason: c.Reason + wantedBy(want), Advice: c.Advice}
		}
	}
	return nil
}

// ownershipRecord writes one ownership record t, or says what stands in its way.
func (pl *planner) ownershipRecord(b *builder, t *endpoint.Endpoint, recheck bool) *Conflict {
	if pl.apex != "" && !endpoint.InDomain(t.Name, pl.apex) {
		// external-dns issues 449 and 4234: the apex's "cname-example.com".
		return &Conflict{Reason: fmt.Sprintf("its ownership record TXT %s would lie outside the zone %s, which Route 53 refuses", t.Name, pl.apex),
			Advice: `use a --txt-prefix that ends in a dot, such as "%{record_type}-txt.", which puts every ownership record below the name it speaks for`}
	}
	have := pl.atName.find(t.Key())
	if b.gone.has(t.Key()) {
		have = nil
	}
	if have != nil && !pl.ours(have) {
		return &Conflict{Reason: fmt.Sprintf("its ownership record TXT %s is taken by %s", t.Name, txtOwnerText(have)),
			Advice: "crossfade never overwrites a TXT record it does not own: the other owner must release the name, or the record must be removed"}
	}
	if have != nil && sameTXT(have, t) {
		if recheck {
			b.delete(have)
			b.create(have)
		}
		return nil
	}
	// Route 53 holds no weighted TXT set beside a simple one at one name (nor the reverse).
	for _, o := range pl.atName.at(t.Name) {
		if o.Type != endpoint.TypeTXT || o.Key() == t.Key() || b.gone.has(o.Key()) || !clash(o.Policy, t.Policy) {
			continue
		}
		if !pl.ours(o) {
			return &Conflict{Reason: fmt.Sprintf("its %s ownership record TXT %s cannot be created beside the %s TXT record there, held by %s", kindOf(t.Policy), t.Name, kindOf(o.Policy), txtOwnerText(o)),
				Advice: "Route 53 holds no TXT sets of two routing policies (nor one failover role twice) at one name: the other owner must release it, or the record must be removed"}
		}
		// Ours, and its record is gone (a record of ours under that policy would have
		// been cleared out of want's way first): a leftover.
		b.delete(o)
	}
	if have != nil {
		b.delete(have)
	}
	b.create(t)
	return nil
}

// txtOwnerText says whose a TXT record is, for messages.
func txtOwnerText(t *endpoint.Endpoint) string {
	if o := mustOwner(t); o != "" {
		return fmt.Sprintf("owner %q", o)
	}
	return fmt.Sprintf("a TXT record that is not an ownership record (%s)", strings.Join(t.Targets, " "))
}

// WantsTTLLabel holds, in a weighted member's ownership record, the TTL its source asks
// for while the member carries its group's other TTL (written as
// "external-dns/crossfade-wants-ttl=60"). Route 53 keeps one TTL per weighted group, so
// members published by different owners can only move together, in one batch: the label
// is how each publisher tells the others what it asks for. Absent whenever the member
// carries what its source asks.
const WantsTTLLabel = "crossfade-wants-ttl"

// groupTTL is the one TTL every weighted member of a name and type must carry.
type groupTTL struct {
	typ string
	ttl endpoint.TTL
	// others is set when the group moves to ttl because every member asks for it, other
	// owners' members included (WantsTTLLabel): this publisher rewrites their sets' TTL
	// in the same batch as its own, as nothing else can change a shared group's TTL.
	others bool
	// why says, when members ask for different TTLs, who asks for what; for the note.
	why string
	// shared is set when another owner publishes a member: only then is what this
	// owner's sources ask recorded (WantsTTLLabel), for that owner to read.
	shared bool
}

// askedTTL returns the TTL another owner's member asks for, as its ownership record says
// (WantsTTLLabel), or the TTL it carries when it says nothing; ok is false when the
// record states no owner or an unreadable ask: nobody's ask to follow.
func askedTTL(c *endpoint.Endpoint) (ttl endpoint.TTL, recorded, ok bool) {
	v, has := c.LookupLabel(WantsTTLLabel)
	if c.Owner() == "" {
		return c.TTL, false, false
	}
	if !has {
		return c.TTL, false, true
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return c.TTL, false, false
	}
	return endpoint.NewTTL(n), true, true
}

// groupTTLs returns, per record type, the one TTL every weighted member of the name
// must carry (Route 53 refuses a weighted set whose TTL differs from its group's), for
// the types whose group TTL is fixed or agreed; absent types keep what their sources ask.
//
// The TTL the members carry is fixed while a cutover holds the weights (it may have
// lowered the TTL for its duration); a member of another owner whose ownership record
// records no TTL it asks for (WantsTTLLabel), or of no owner, asks for the TTL it
// carries, and nothing moves it. Otherwise the
// members decide when they agree, this owner's by their sources, another owner's by its
// record: the group moves to the TTL they all ask for, other owners' sets included. When
// they disagree, the TTL the members carry now stays, else the first member's (by set
// identifier) is taken. The result lives in a buffer the next call reuses: planning
// 100,000 names allocates nothing here but a disagreement's description.
func (pl *planner) groupTTLs(g *group) []groupTTL {
	out := pl.ttlBuf[:0]
	defer func() { pl.ttlBuf = out[:0] }()
	for i, d := range g.desired {
		if d.Policy.Kind != endpoint.Weighted || slices.ContainsFunc(g.desired[:i], func(o *endpoint.Endpoint) bool {
			return o.Type == d.Type && o.Policy.Kind == endpoint.Weighted
		}) {
			continue
		}
		typ := d.Type
		if len(g.desired) == 1 && !slices.ContainsFunc(g.current, func(c *endpoint.Endpoint) bool {
			return c.Type == typ && c.Policy.Kind == endpoint.Weighted && c.Key() != d.Key()
		}) {
			// A member alone in its group (the common case): no TTL to agree on.
			continue
		}
		var fixed, now endpoint.TTL
		asks := pl.askBuf[:0]
		shared := false
		_, held := pl.held[endpoint.Key{Name: d.Name, Type: typ}]
		for _, c := range g.current {
			if c.Type != typ || c.Policy.Kind != endpoint.Weighted || c.IsAlias() || !c.TTL.IsConfigured() {
				continue
			}
			now = c.TTL
			switch {
			case held:
				fixed = c.TTL
			case c.Owner() != pl.owner:
				shared = true
				ttl, recorded, ok := askedTTL(c)
				if !ok || !recorded {
					fixed = c.TTL
				}
				asks = append(asks, memberAsk{e: c, ttl: ttl, recorded: recorded})
			}
		}
		if fixed != 0 && held {
			out = append(out, groupTTL{typ: typ, ttl: fixed})
			continue
		}
		for _, o := range g.desired[i:] {
			if o.Type != typ || o.Policy.Kind != endpoint.Weighted || o.IsAlias() || !o.TTL.IsConfigured() {
				continue
			}
			asks = append(asks, memberAsk{e: o, ttl: o.TTL, recorded: true, ours: true})
		}
		pl.askBuf = asks[:0]
		agree := len(asks) > 0 && !slices.ContainsFunc(asks, func(a memberAsk) bool { return a.ttl != asks[0].ttl })
		switch {
		case agree:
			// The other owners' sets move too only when one of them must.
			others := slices.ContainsFunc(asks, func(a memberAsk) bool { return !a.ours && a.e.TTL != a.ttl })
			out = append(out, groupTTL{typ: typ, ttl: asks[0].ttl, others: others, shared: shared})
		case fixed != 0:
			out = append(out, groupTTL{typ: typ, ttl: fixed, why: pl.describeAsks(asks), shared: shared})
		case now != 0:
			out = append(out, groupTTL{typ: typ, ttl: now, why: pl.describeAsks(asks), shared: shared})
		case len(asks) > 0:
			out = append(out, groupTTL{typ: typ, ttl: asks[0].ttl, why: pl.describeAsks(asks), shared: shared})
		}
	}
	return out
}

// memberAsk is the TTL one weighted member asks for: its source's, for this owner's;
// its ownership record's, or what it carries when that records none (recorded false),
// for another owner's.
type memberAsk struct {
	e        *endpoint.Endpoint
	ttl      endpoint.TTL
	recorded bool
	// ours marks a member this owner publishes (its source's ask).
	ours bool
}

// describeAsks says what each member of a disagreeing group asks for, other owners'
// members by their owner, so that the note names whose publisher must change.
func (pl *planner) describeAsks(asks []memberAsk) string {
	parts := make([]string, 0, len(asks))
	for _, a := range asks {
		switch o := a.e.Owner(); {
		case a.ours:
			parts = append(parts, fmt.Sprintf("%s asks %d", a.e.SetIdentifier, a.ttl.Seconds()))
		case o == "":
			parts = append(parts, fmt.Sprintf("%s (no owner) carries %d", a.e.SetIdentifier, a.ttl.Seconds()))
		case a.recorded:
			parts = append(parts, fmt.Sprintf("%s (owner %q) asks %d", a.e.SetIdentifier, o, a.ttl.Seconds()))
		default:
			parts = append(parts, fmt.Sprintf("%s (owner %q) carries %d and records no TTL it asks for (external-dns never records one: "+
				"then change the TTL of every member by hand, in one batch)", a.e.SetIdentifier, o, a.ttl.Seconds()))
		}
	}
	return strings.Join(parts, ", ")
}

// fitTTL gives a weighted member its group's TTL, with a note when its source asked for
// another: writing what it asked would be refused by Route 53, and writing it every sync
// would be a write loop. What it asked is recorded in its ownership record
// (WantsTTLLabel), so that the group moves once every other member's publisher asks
// for the same.
func (pl *planner) fitTTL(d *endpoint.Endpoint, ttls []groupTTL) *endpoint.Endpoint {
	i := slices.IndexFunc(ttls, func(t groupTTL) bool { return t.typ == d.Type })
	if i < 0 {
		return d
	}
	ttl := ttls[i].ttl
	if d.Policy.Kind != endpoint.Weighted || d.IsAlias() || d.TTL == ttl {
		return d
	}
	c := d.Clone()
	if d.TTL.IsConfigured() {
		advice := "the group moves to one TTL, all members in one batch, once every member's publisher asks for it; they ask: " + ttls[i].why
		if _, held := pl.held[endpoint.Key{Name: d.Name, Type: d.Type}]; held {
			advice = "a cutover holds the weights and the TTL of this group; its TTL follows the sources again after `crossfade cutover release`"
		} else if ttls[i].why == "" {
			advice = "the group's TTL is set by a record this publisher cannot change; " + advice
		}
		pl.plan.Notes = append(pl.plan.Notes, Conflict{
			Key:    d.Key(),
			Reason: fmt.Sprintf("the source asks for TTL %d, but the weighted sets of %s %s carry TTL %d and Route 53 requires one TTL per weighted group; published with TTL %d%s", d.TTL.Seconds(), d.Name, d.Type, ttl.Seconds(), ttl.Seconds(), wantedBy(d)),
			Advice: advice,
		})
		if ttls[i].shared {
			if c.Labels == nil {
				c.Labels = endpoint.Labels{}
			}
			c.Labels[WantsTTLLabel] = strconv.FormatInt(d.TTL.Seconds(), 10)
		}
	}
	c.TTL = ttl
	return c
}

// moveOthers rewrites, in b, the TTL of other owners' members of the groups that move
// because every member asks for the new TTL (groupTTL.others), each set deleted exactly
// as read and created again with nothing but its TTL changed; their ownership records
// stay as they are. It does so only when every member of this owner is rewritten in the
// same batch: a batch that moved some members would be refused by Route 53.
func (pl *planner) moveOthers(b *builder, g *group, ttls []groupTTL) {
	if pl.policy == CreateOnly {
		return
	}
	for _, t := range ttls {
		if !t.others {
			continue
		}
		member := func(c *endpoint.Endpoint) bool {
			return c.Type == t.typ && c.Policy.Kind == endpoint.Weighted && !c.IsAlias() && c.TTL.IsConfigured() && c.TTL != t.ttl
		}
		if slices.ContainsFunc(g.current, func(c *endpoint.Endpoint) bool {
			return member(c) && c.Owner() == pl.owner && !b.gone.has(c.Key())
		}) {
			continue
		}
		for _, c := range g.current {
			if !member(c) || c.Owner() == pl.owner || b.gone.has(c.Key()) {
				continue
			}
			moved := c.Clone()
			moved.TTL = t.ttl
			b.delete(c)
			b.create(moved)
			pl.plan.Summary.Update++
		}
	}
}

// name is the group's DNS name.
func (g *group) name() string {
	if len(g.desired) > 0 {
		return g.desired[0].Name
	}
	return g.current[0].Name
}

// resources lists the source objects behind the group's records, wanted now or owned by
// owner before.
func (g *group) resources(owner string) []string {
	var out []string
	for _, l := range [][]*endpoint.Endpoint{g.desired, g.current} {
		for _, e := range l {
			if o := e.Owner(); o != "" && o != owner {
				continue
			}
			if r := e.Resource(); r != "" && !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	slices.Sort(out)
	return out
}

func sameTXT(have, want *endpoint.Endpoint) bool {
	return have.Targets.Same(want.Targets) && have.Policy == want.Policy &&
		have.ProviderSpecific[endpoint.PropHealthCheckID] == want.ProviderSpecific[endpoint.PropHealthCheckID]
}

// mustOwner reads the owner from an ownership TXT record, "" for any other TXT record.
func mustOwner(t *endpoint.Endpoint) string {
	if len(t.Targets) == 0 {
		return ""
	}
	o, _ := endpoint.OwnershipLabel(t.Targets[0], endpoint.OwnerLabel)
	return o
}

// keySet is a tiny set of keys: a unit deletes a few record sets at most.
type keySet []endpoint.Key

func (s *keySet) add(k endpoint.Key) { *s = append(*s, k) }

func (s *keySet) has(k endpoint.Key) bool { return s != nil && slices.Contains(*s, k) }
