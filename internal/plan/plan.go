package plan

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Registry is what the planner needs of the ownership registry.
type Registry interface {
	// OwnerID is the owner whose records may be changed.
	OwnerID() string
	// Read labels the zone's records with their owners and indexes the ownership records.
	Read(records []*endpoint.Endpoint) registry.Zone
	// For returns the ownership records that accompany an owned record.
	For(rec *endpoint.Endpoint) []*endpoint.Endpoint
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
}

// Summary counts record changes (ownership records not included).
type Summary struct {
	Create, Update, Delete int
	// Replace counts routing-policy transitions (each one delete plus one create).
	Replace int
	// Held counts changes the policy kept back.
	Held int
}

// Plan is the outcome for one zone.
type Plan struct {
	// Batches are applied in order, each atomically.
	Batches []Batch
	// Conflicts are records not written, with why.
	Conflicts []Conflict
	// Summary counts what the batches do.
	Summary Summary
}

// DefaultManagedTypes are the record types planned unless told otherwise, as external-dns.
var DefaultManagedTypes = []string{endpoint.TypeA, endpoint.TypeAAAA, endpoint.TypeCNAME}

// Calculate plans one zone. The output depends only on the input, never on map order.
func Calculate(in Input) *Plan {
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
	managed := func(e *endpoint.Endpoint) bool {
		return slices.Contains(types, e.Type) && (!filtered || in.DomainFilter.Match(e.Name))
	}

	zone := in.Registry.Read(in.Current)
	p := &Plan{}
	current := sortedManaged(zone.Records, managed)
	desired := sortedManaged(in.Desired, managed)

	pl := planner{owner: in.Registry.OwnerID(), policy: in.Policy, reg: in.Registry, zone: &zone, legacy: zone.LegacyOnly,
		held: registry.Authorities(in.Current), plan: p}
	var units [][]Change
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
		g.prepare(p)
		if u := pl.unit(&g); len(u) > 0 {
			units = append(units, u)
		}
		i, j = i2, j2
	}
	batches, tooBig := pack(units, in.Limits)
	p.Batches = batches
	for _, u := range tooBig {
		p.Conflicts = append(p.Conflicts, Conflict{
			Key:    u[0].Endpoint.Key(),
			Reason: fmt.Sprintf("the %d changes for this name exceed one change batch (%d values, %d value characters)", len(u), in.Limits.MaxRecords, in.Limits.MaxValueChars),
			Advice: "split the records across names; crossfade never splits one name's changes across batches",
		})
	}
	slices.SortStableFunc(p.Conflicts, func(a, b Conflict) int { return compareKeys(a.Key, b.Key) })
	return p
}

func compareKeys(a, b endpoint.Key) int {
	return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Type, b.Type), cmp.Compare(a.SetIdentifier, b.SetIdentifier))
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
	out := make([]*endpoint.Endpoint, 0, len(in))
	for _, e := range in {
		if managed(e) {
			out = append(out, e)
		}
	}
	byKey := func(a, b *endpoint.Endpoint) int { return compareKeys(a.Key(), b.Key()) }
	if !slices.IsSortedFunc(out, byKey) {
		slices.SortStableFunc(out, byKey)
	}
	return out
}

// prepare leaves one desired record per key (the group is sorted by key), reporting
// sources that disagree.
func (g *group) prepare(p *Plan) {
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
	zone   *registry.Zone
	legacy map[endpoint.Key]bool
	// held maps a name and type (no set identifier) to the cutover holding its weights.
	held map[endpoint.Key]string
	plan *Plan
}

// holdWeight keeps what a cutover wrote (safety rule 3): while a cutover holds the weights
// of d's name and type, an existing weighted member keeps its current weight (and TTL,
// which a cutover may lower for its duration) whatever the source says. A source that
// pins another weight is reported, not obeyed; everything else about the record is
// still published.
func (pl *planner) holdWeight(d, cur *endpoint.Endpoint) *endpoint.Endpoint {
	if cur == nil || d.Policy.Kind != endpoint.Weighted || cur.Policy.Kind != endpoint.Weighted {
		return d
	}
	if d.Policy.Weight == cur.Policy.Weight && (!d.TTL.IsConfigured() || d.TTL == cur.TTL) {
		return d
	}
	cutover, ok := pl.held[endpoint.Key{Name: d.Name, Type: d.Type}]
	if !ok {
		return d
	}
	if d.Policy.Weight != cur.Policy.Weight {
		pl.plan.Conflicts = append(pl.plan.Conflicts, Conflict{
			Key:    d.Key(),
			Reason: fmt.Sprintf("the source asks for weight %d, but cutover %s holds the weights of %s %s (now %d)", d.Policy.Weight, cutover, d.Name, d.Type, cur.Policy.Weight),
			Advice: fmt.Sprintf("the weight stays %d; set the source's weight to %d, or hand the weights back with `crossfade cutover release`", cur.Policy.Weight, cur.Policy.Weight),
		})
	}
	held := d.Clone()
	held.Policy.Weight, held.TTL = cur.Policy.Weight, cur.TTL
	return held
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

// unit plans one name: deletes first, then creates, then upserts, so that Route 53,
// which checks each change against the state the earlier ones leave, accepts a
// transition in one batch.
func (pl *planner) unit(g *group) []Change {
	var dels, creates, upserts []Change
	var gone keySet // record and TXT sets this unit deletes
	conflict := func(c Conflict) { pl.plan.Conflicts = append(pl.plan.Conflicts, c) }

	for _, d := range g.desired {
		cur := g.find(g.current, d.Key())
		d = pl.holdWeight(d, cur)
		if cur != nil && cur.Owner() == pl.owner && cur.Policy.Kind == d.Policy.Kind && d.SameRecord(cur) {
			// Unchanged; only a zone written by an older external-dns, with the legacy
			// ownership form alone, still needs its type-prefixed record.
			if pl.legacy[cur.Key()] && pl.policy != CreateOnly {
				upserts = append(upserts, pl.txtUpserts(pl.owned(d))...)
			}
			continue
		}
		want := pl.owned(d)
		if cur != nil {
			switch {
			case cur.Owner() != pl.owner:
				conflict(notOwned(cur, want, pl.reg.For(want)[0].Name, pl.owner))
			case pl.policy == CreateOnly:
				pl.plan.Summary.Held++
			case cur.Policy.Kind != want.Policy.Kind:
				// Route 53 will not turn one routing policy into another in place.
				dels = append(dels, pl.deleteWithTXT(cur, &gone)...)
				creates = append(creates, pl.createWithTXT(want, &gone)...)
				pl.plan.Summary.Replace++
			default:
				if want.TTL == 0 {
					want.TTL = cur.TTL
				}
				// The ownership records are rewritten with the record, as external-dns
				// does: they carry its set identifier, weight and health check.
				upserts = append(upserts, Change{Upsert, want})
				for _, t := range pl.reg.For(want) {
					upserts = append(upserts, Change{Upsert, t})
				}
				pl.plan.Summary.Update++
			}
			continue
		}

		blockers := g.blockers(want)
		ok := true
		for _, b := range blockers {
			switch {
			case b.Owner() != pl.owner:
				conflict(blocked(b, want, pl.owner, pl.reg.For(b)[0].Name))
				ok = false
			case g.find(g.desired, b.Key()) != nil:
				conflict(Conflict{Key: want.Key(), Reason: fmt.Sprintf("sources want both %s and %s, which Route 53 cannot hold together", describe(want), describe(g.find(g.desired, b.Key()))), Advice: "give every member of the name the same routing policy"})
				ok = false
			case pl.policy == CreateOnly:
				pl.plan.Summary.Held++
				ok = false
			}
		}
		if !ok {
			continue
		}
		if t := pl.foreignTXT(want, &gone); t != nil {
			conflict(Conflict{Key: want.Key(), Reason: fmt.Sprintf("its ownership record TXT %s belongs to owner %q", t.Name, mustOwner(t)), Advice: "the other owner must release the name first"})
			continue
		}
		for _, b := range blockers {
			if !gone.has(b.Key()) {
				dels = append(dels, pl.deleteWithTXT(b, &gone)...)
				pl.plan.Summary.Replace++
			}
		}
		creates = append(creates, pl.createWithTXT(want, &gone)...)
		pl.plan.Summary.Create++
	}

	for _, cur := range g.current {
		key := cur.Key()
		if cur.Owner() != pl.owner || g.find(g.desired, key) != nil || gone.has(key) {
			continue
		}
		if pl.policy != Sync {
			pl.plan.Summary.Held++
			continue
		}
		dels = append(dels, pl.deleteWithTXT(cur, &gone)...)
		pl.plan.Summary.Delete++
	}
	return slices.Concat(dels, creates, upserts)
}

// blockers are the current record sets at the name beside which Route 53 refuses want:
// simple beside set-identified members of one type, weighted beside failover, and a
// CNAME beside anything.
func (g *group) blockers(want *endpoint.Endpoint) []*endpoint.Endpoint {
	var out []*endpoint.Endpoint
	for _, c := range g.current {
		if c.Key() == want.Key() {
			continue
		}
		switch {
		case c.Type == endpoint.TypeCNAME && want.Type != endpoint.TypeCNAME,
			want.Type == endpoint.TypeCNAME && c.Type != endpoint.TypeCNAME:
			out = append(out, c)
		case c.Type == want.Type && c.Policy.Kind != want.Policy.Kind:
			out = append(out, c)
		}
	}
	return out
}

// deleteWithTXT deletes an owned record exactly as listed, and its ownership records that
// exist and are ours: Route 53 rejects a whole batch whose DELETE does not match.
func (pl *planner) deleteWithTXT(cur *endpoint.Endpoint, gone *keySet) []Change {
	out := []Change{{Delete, cur}}
	gone.add(cur.Key())
	for _, t := range pl.reg.For(cur) {
		if have := pl.zone.TXT(t.Key()); have != nil && !gone.has(t.Key()) && mustOwner(have) == pl.owner {
			out = append(out, Change{Delete, have})
			gone.add(t.Key())
		}
	}
	return out
}

// createWithTXT creates a record and writes its ownership records: CREATE where none
// exists (or this unit deletes it first), UPSERT over one of ours left behind.
func (pl *planner) createWithTXT(want *endpoint.Endpoint, gone *keySet) []Change {
	out := []Change{{Create, want}}
	for _, t := range pl.reg.For(want) {
		switch have := pl.zone.TXT(t.Key()); {
		case have == nil || gone.has(t.Key()):
			out = append(out, Change{Create, t})
		case !sameTXT(have, t):
			out = append(out, Change{Upsert, t})
		}
	}
	return out
}

// txtUpserts rewrites the ownership records of an updated record where they differ.
func (pl *planner) txtUpserts(want *endpoint.Endpoint) []Change {
	var out []Change
	for _, t := range pl.reg.For(want) {
		if have := pl.zone.TXT(t.Key()); have == nil || !sameTXT(have, t) {
			out = append(out, Change{Upsert, t})
		}
	}
	return out
}

// foreignTXT returns an ownership record of another owner standing where want's would go.
func (pl *planner) foreignTXT(want *endpoint.Endpoint, gone *keySet) *endpoint.Endpoint {
	for _, t := range pl.reg.For(want) {
		if have := pl.zone.TXT(t.Key()); have != nil && !gone.has(t.Key()) && mustOwner(have) != pl.owner {
			return have
		}
	}
	return nil
}

func sameTXT(have, want *endpoint.Endpoint) bool {
	return have.Targets.Same(want.Targets) && have.Policy == want.Policy &&
		have.ProviderSpecific[endpoint.PropHealthCheckID] == want.ProviderSpecific[endpoint.PropHealthCheckID]
}

// mustOwner reads the owner from an ownership TXT record the registry indexed.
func mustOwner(t *endpoint.Endpoint) string {
	if len(t.Targets) == 0 {
		return ""
	}
	l, err := registry.ParsePayload(t.Targets[0])
	if err != nil {
		return ""
	}
	return l[endpoint.OwnerLabel]
}

// keySet is a tiny set of keys: a unit deletes a few record sets at most.
type keySet []endpoint.Key

func (s *keySet) add(k endpoint.Key) { *s = append(*s, k) }

func (s *keySet) has(k endpoint.Key) bool { return s != nil && slices.Contains(*s, k) }
