package controller

// The incremental reconcile (Config.Incremental): after a change, the source runs again for
// the Services that changed, and the planner for the names their records had or have,
// against the controller's own copy of each zone (what the zone cache holds, kept by
// name). A change costs what it changes rather than a pass over every object and record.
//
// It runs only when the outcome is the full reconcile's, and the full one runs otherwise:
//   - only Services are incremental, and only those whose records are read from the
//     Service alone (not NodePort nor headless, whose records come from Nodes and
//     EndpointSlices); a change of any other kind, Services read by Istio Gateways, Cloud
//     Map, or only for lookups (DropKinds), a dry run, or --allow-mass-delete's first
//     reconcile, take the full path;
//   - a name where the records of several objects were merged is planned in full;
//   - a plan that deletes or replaces a record (the deletion guard weighs deletions against
//     the whole zone), or touches weighted records (the hold prober's names), a zone with
//     the guard's marker, nested zones (a name moving between zones), a refusal held back,
//     a zone cache invalidated, or zones added or gone, fall back to the full path;
//   - the full reconcile runs at least every Config.FullInterval (10 minutes by default),
//     whatever happens; the Interval's reconciles in between re-plan what changed, which at
//     rest is nothing.
//
// The names of a zone are independent in the planner (changes.Calculate plans one name
// at a time), except for what the registry reads: the ownership TXT records of a name
// (registry For) and the authority records of a hold are planned with it, as are TXT
// records no record's ownership accounts for (legacy or orphaned), with every plan.

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/provider/cache"
	"github.com/crossfade-io/crossfade/internal/registry"
	"github.com/crossfade-io/crossfade/internal/source"
)

// incObjects is what the incremental path reads objects through; *Watcher implements it.
type incObjects interface {
	TakeChanges() ObjectChanges
	Service(key string) (*corev1.Service, bool)
	Complete() bool
	FollowsServices() bool
}

// zoneAges is a zone cache that says which zones it holds (internal/provider/cache): a
// zone absent from Ages was invalidated, and will be listed again by the next full plan.
type zoneAges interface {
	Ages() map[string]time.Duration
}

// incState is what an incremental reconcile starts from: the last reconcile's outcome.
type incState struct {
	// full is when the full reconcile it comes from started.
	full time.Time
	// res is the source's result, idx its index by object.
	res source.Result
	idx source.Index
	// zones are the zones planned, in the provider's order; mirrors the records of each
	// (by zone id) as the zone cache holds them.
	zones   []provider.Zone
	mirrors map[string]*zoneMirror
	// rep is the last report, whose conflicts, notes and kept records stand at every name
	// not planned again.
	rep *Report
	// ages are the zone cache's ages of the zones when last looked at (nil: not yet).
	ages map[string]time.Duration
}

// reconcileIncremental runs an incremental reconcile when it can; done is false when the
// full reconcile must run instead (which it logs, with why, at debug level).
func (c *Controller) reconcileIncremental(ctx context.Context, start time.Time) (res source.Result, rep *Report, err error, done bool) {
	if !c.cfg.Incremental {
		return res, nil, nil, false
	}
	objs, ok := c.objects.(incObjects)
	if !ok {
		return res, nil, nil, false
	}
	// Taken before anything is read, by either path: a change that comes meanwhile is
	// the next reconcile's.
	ch := objs.TakeChanges()
	st := c.inc
	c.inc = nil // rebuilt by whichever path runs now, or left nil when it fails
	why := c.incBlocked(st, ch, objs, start)
	if why == "" {
		res, rep, why, err = c.incremental(ctx, st, ch, objs)
	}
	if why != "" {
		c.log.Debug("reconcile path", "path", "full", "why", why)
		return res, nil, nil, false
	}
	c.log.Debug("reconcile path", "path", "incremental", "services", len(ch.Services))
	return res, rep, err, true
}

// incBlocked says why the incremental path cannot run at all now, "" when it may.
func (c *Controller) incBlocked(st *incState, ch ObjectChanges, objs incObjects, start time.Time) string {
	s := c.cfg.Syncer
	switch {
	case st == nil:
		return "no complete and successful full reconcile to start from"
	case ch.All:
		return "objects other than Services changed"
	case !objs.FollowsServices() || c.cfg.CloudMap != nil || slices.Contains(c.cfg.DropKinds, "Service"):
		return "Services are read by more than their own records"
	case s.DryRun || s.Guard.Allow || s.Guard.AllowRemembered:
		return "dry run or --allow-mass-delete"
	case s.Policy != changes.Sync && s.Policy != "":
		// The plan's summary counts the changes the policy holds back at every name.
		return "policy " + string(s.Policy)
	case start.Sub(st.full) >= c.cfg.FullInterval:
		return "the periodic full reconcile is due"
	case !s.Refusals.empty():
		return "refused names are held back"
	case !objs.Complete():
		return "some objects are not known"
	}
	return ""
}

// empty reports whether no refusal is remembered.
func (r *Refusals) empty() bool {
	if r == nil {
		return true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.byUnit) == 0
}

// incremental re-runs the source for the changed Services and plans and writes their
// names. why is non-empty, and nothing was written, when the full path must run instead.
func (c *Controller) incremental(ctx context.Context, st *incState, ch ObjectChanges, objs incObjects) (source.Result, *Report, string, error) {
	s := c.cfg.Syncer
	// The zones first: a zone the hold prober invalidated is listed and planned again
	// even when no object changed.
	zones, err := s.Provider.Zones(ctx)
	if err != nil {
		return source.Result{}, nil, "listing the zones failed: " + err.Error(), nil
	}
	if !slices.Equal(zones, st.zones) {
		return source.Result{}, nil, "zones were added or are gone", nil
	}
	cached, ok := s.Provider.(zoneAges)
	if !ok {
		return source.Result{}, nil, fmt.Sprintf("provider %T keeps no zone cache", s.Provider), nil
	}
	// Only the full path lists a zone (Syncer.syncZone): a zone the cache holds, and has
	// not listed again since (its age never shrinks but by a listing), is the copy's.
	ages := cached.Ages()
	for _, z := range zones {
		age, ok := ages[z.ID]
		if !ok {
			return source.Result{}, nil, "the cache of zone " + z.Name + " was invalidated", nil
		}
		if last, seen := st.ages[z.ID]; seen && age < last {
			return source.Result{}, nil, "zone " + z.Name + " was listed again", nil
		}
	}
	st.ages = ages
	// The records each changed Service wants now.
	touched := map[string]bool{}        // record names
	resources := map[string]bool{}      // the changed Services' resource labels
	fresh := map[string]source.Result{} // their results, by resource label
	var wanted []*endpoint.Endpoint
	for _, key := range ch.Services {
		ns, name, _ := strings.Cut(key, "/")
		res := source.ServiceResource(ns, name)
		var r source.Result
		if svc, ok := objs.Service(key); ok {
			if !source.ServiceStandsAlone(svc) {
				return source.Result{}, nil, fmt.Sprintf("Service %s reads Nodes or EndpointSlices", key), nil
			}
			r = c.cfg.Source.ServiceEndpoints(svc)
		}
		resources[res], fresh[res] = true, r
		for _, n := range st.idx.Names[res] {
			touched[n] = true
		}
		for _, e := range r.Endpoints {
			if e.Resource() != res {
				return source.Result{}, nil, fmt.Sprintf("Service %s yields records labelled %q", key, e.Resource()), nil
			}
			touched[e.Name] = true
			wanted = append(wanted, e)
		}
	}
	if len(touched) == 0 {
		// Nothing any changed object wants, or wanted: the plan is the last one.
		return c.unchanged(st, resources, fresh)
	}
	names := slices.Sorted(mapKeys(touched))
	// The records wanted at those names: the other objects' as they were, the changed
	// ones' as they are now, merged as the source merges.
	var before, after []*endpoint.Endpoint
	merged := map[string]bool{}
	for _, n := range names {
		if st.idx.Merged[n] {
			return source.Result{}, nil, "records of several objects were merged at " + n, nil
		}
		old := recordsAt(st.res.Endpoints, n)
		before = append(before, old...)
		var at []*endpoint.Endpoint
		for _, e := range old {
			if !resources[e.Resource()] {
				at = append(at, e.Clone())
			}
		}
		for _, e := range wanted {
			if e.Name == n {
				at = append(at, e.Clone())
			}
		}
		at, folded := source.MergeAt(at)
		merged[n] = folded
		after = append(after, at...)
	}
	res := patchResult(st.res, names, after, resources, fresh)
	if !slices.Equal(res.Held, st.res.Held) {
		// The records a held object owns are kept wherever they are, not only at the
		// names it wants: an object that turns invalid or valid is planned in full.
		return source.Result{}, nil, "an object's input turned invalid or valid", nil
	}
	keep := Keep{Resources: res.Held}
	plans, unzoned, why := s.planNames(st, zones, touched, before, after, keep)
	if why != "" {
		return source.Result{}, nil, why, nil
	}

	// Committed from here: the plans are written.
	rep := &Report{Incremental: true, Zones: make([]ZoneReport, len(zones)), Unzoned: patchUnzoned(st.rep.Unzoned, touched, unzoned)}
	for i, z := range zones {
		p := plans[i]
		zr := ZoneReport{Zone: z, Changes: p.set, Desired: p.desired}
		log := s.Logger
		if log == nil {
			log = c.log
		}
		for b, units := range p.set.Units {
			units = s.holdBack(&zr, units)
			s.apply(ctx, &zr, units, log.With("zone", z.Name, "zone_id", z.ID, "batch", b))
		}
		m := st.mirrors[z.ID]
		for _, b := range zr.applied {
			m.apply(b)
		}
		last := st.rep.Zones[i]
		zr.applied = nil
		zr.Weighted, zr.NameServers = last.Weighted, last.NameServers
		zr.Changes = &changes.Set{Batches: p.set.Batches, Units: p.set.Units, Summary: p.set.Summary,
			Conflicts: patchConflicts(last.Changes.Conflicts, p.set.Conflicts, p.names),
			Notes:     patchConflicts(last.Changes.Notes, p.set.Notes, p.names),
			Kept:      patchConflicts(last.Changes.Kept, p.set.Kept, p.names)}
		// Every kept record is counted and listed once (changes' planner).
		zr.Changes.Summary.Kept = len(zr.Changes.Kept)
		rep.Zones[i] = zr
	}
	if err := rep.Err(); err != nil {
		return res, rep, "", err // the next reconcile is a full one
	}
	for _, z := range rep.Zones {
		if len(z.failed) > 0 || len(z.Refused) > 0 {
			return res, rep, "", nil // the next reconcile is a full one
		}
	}
	idx := st.idx
	for r := range resources {
		var ns []string
		for _, e := range fresh[r].Endpoints {
			if !slices.Contains(ns, e.Name) {
				ns = append(ns, e.Name)
			}
		}
		slices.Sort(ns)
		if len(ns) == 0 {
			delete(idx.Names, r)
		} else {
			idx.Names[r] = ns
		}
	}
	for n, folded := range merged {
		if folded {
			idx.Merged[n] = true
		}
	}
	c.inc = &incState{full: st.full, res: res, idx: idx, zones: st.zones, mirrors: st.mirrors, rep: rep, ages: st.ages}
	return res, rep, "", nil
}

// unchanged is the incremental reconcile of changes that want no record, now or before
// (a Service without crossfade's annotations): the result's problems are brought up to
// date, and the zones are left as the last reconcile left them.
func (c *Controller) unchanged(st *incState, resources map[string]bool, fresh map[string]source.Result) (source.Result, *Report, string, error) {
	res := patchResult(st.res, nil, nil, resources, fresh)
	if !slices.Equal(res.Held, st.res.Held) {
		return source.Result{}, nil, "an object's input turned invalid or valid", nil
	}
	rep := &Report{Incremental: true, Unzoned: st.rep.Unzoned, Zones: make([]ZoneReport, len(st.rep.Zones))}
	for i, last := range st.rep.Zones {
		rep.Zones[i] = ZoneReport{Zone: last.Zone, Desired: last.Desired, Weighted: last.Weighted, NameServers: last.NameServers,
			Changes: &changes.Set{Conflicts: last.Changes.Conflicts, Notes: last.Changes.Notes, Kept: last.Changes.Kept,
				Summary: changes.Summary{Kept: len(last.Changes.Kept)}}}
	}
	c.inc = &incState{full: st.full, res: res, idx: st.idx, zones: st.zones, mirrors: st.mirrors, rep: rep, ages: st.ages}
	return res, rep, "", nil
}

// namePlan is one zone's plan of the touched names.
type namePlan struct {
	set *changes.Set
	// desired is how many records the zone is asked to hold now.
	desired int
	// names are the names of every record planned, ownership records included: the
	// last plan's conflicts at them are replaced by this plan's.
	names map[string]bool
}

// planNames plans the touched names in every zone: before and after are the records
// wanted at them in the last reconcile and now. why is non-empty when the plan is not
// the full plan's at those names, or would need the whole zone (a deletion).
func (s *Syncer) planNames(st *incState, zones []provider.Zone, touched map[string]bool, before, after []*endpoint.Endpoint, keep Keep) ([]namePlan, []string, string) {
	was, _ := assign(s.Provider.AdjustEndpoints(before), zones, s.DomainFilter)
	now, unzoned := assign(s.Provider.AdjustEndpoints(after), zones, s.DomainFilter)
	types := s.ManagedTypes
	if types == nil {
		types = changes.DefaultManagedTypes
	}
	plans := make([]namePlan, len(zones))
	for i, z := range zones {
		m := st.mirrors[z.ID]
		if m == nil {
			return nil, nil, "zone " + z.Name + " has no copy"
		}
		if slices.ContainsFunc(m.byName[MarkerName(z.Name)], func(e *endpoint.Endpoint) bool { return e.Type == endpoint.TypeTXT }) {
			return nil, nil, "zone " + z.Name + " holds the deletion guard's marker"
		}
		desired := now[z.ID]
		current, names := m.subset(touched, desired, s.Registry, types)
		for _, e := range slices.Concat(current, desired) {
			if e.Type != endpoint.TypeTXT && e.Policy.Kind == endpoint.Weighted {
				return nil, nil, "weighted records at " + e.Name
			}
		}
		set := changes.Calculate(s.planInput(z, desired, current, keep, nil))
		if set.Summary.Delete > 0 || set.Summary.Replace > 0 {
			return nil, nil, "the plan deletes records in zone " + z.Name + ", which the deletion guard weighs against the whole zone"
		}
		plans[i] = namePlan{set: set, names: names, desired: st.rep.Zones[i].Desired - len(was[z.ID]) + len(desired)}
	}
	return plans, unzoned, ""
}

// rememberFull keeps what a full reconcile found, for the incremental ones that follow,
// when it may be built on: the objects complete, every zone listed, planned and written
// without a refusal, nothing held by the deletion guard, and no zone inside another.
func (c *Controller) rememberFull(start time.Time, res source.Result, idx source.Index, rep *Report, err error, complete bool) {
	if !c.cfg.Incremental {
		return
	}
	c.inc = nil
	if err != nil || rep == nil || !complete || len(rep.Unplanned) > 0 || c.cfg.Syncer.DryRun || idx.Names == nil {
		return
	}
	st := &incState{full: start, res: res, idx: idx, rep: rep, mirrors: make(map[string]*zoneMirror, len(rep.Zones))}
	for i := range rep.Zones {
		zr := &rep.Zones[i]
		if zr.Changes == nil || zr.Err != nil || len(zr.failed) > 0 || len(zr.Refused) > 0 || zr.HeldDeletions != nil {
			return
		}
		for _, o := range rep.Zones {
			if o.Zone.ID != zr.Zone.ID && endpoint.InDomain(zr.Zone.Name, o.Zone.Name) {
				return
			}
		}
		st.zones = append(st.zones, zr.Zone)
		st.mirrors[zr.Zone.ID] = newZoneMirror(zr.current, zr.applied, c.cfg.Syncer.Registry)
		zr.current, zr.applied = nil, nil
	}
	c.inc = st
}

// zoneMirror is a zone's records as the zone cache holds them, by name.
type zoneMirror struct {
	byName map[string][]*endpoint.Endpoint
	// loose are the names of TXT records that are no ownership record of a record of the
	// zone (legacy forms the registry reads, orphans): every plan reads them.
	loose map[string]bool
}

// newZoneMirror indexes current, the zone as listed, and the batches written since.
func newZoneMirror(current []*endpoint.Endpoint, applied []changes.Batch, reg changes.Registry) *zoneMirror {
	m := &zoneMirror{byName: make(map[string][]*endpoint.Endpoint, len(current)), loose: map[string]bool{}}
	for _, r := range current {
		m.byName[r.Name] = append(m.byName[r.Name], r)
	}
	for _, b := range applied {
		m.apply(b)
	}
	accounted := map[string]bool{}
	for name, recs := range m.byName {
		for _, t := range ownershipNames(reg, name, recs, nil, nil) {
			accounted[t] = true
		}
	}
	for name, recs := range m.byName {
		if !accounted[name] && slices.ContainsFunc(recs, func(e *endpoint.Endpoint) bool { return e.Type == endpoint.TypeTXT }) {
			m.loose[name] = true
		}
	}
	return m
}

// ownershipNames returns the names where the registry keeps the ownership of records at
// name (of the types of current and desired there, and of types), and of a hold on them.
func ownershipNames(reg changes.Registry, name string, current, desired []*endpoint.Endpoint, types []string) []string {
	seen := map[string]bool{}
	ask := func(typ string) {
		if typ == endpoint.TypeTXT || seen[typ] {
			return
		}
		seen[typ] = true
	}
	for _, t := range types {
		ask(t)
	}
	for _, e := range current {
		ask(e.Type)
	}
	for _, e := range desired {
		if e.Name == name {
			ask(e.Type)
		}
	}
	out := []string{registry.AuthorityName(name)}
	for typ := range seen {
		for _, o := range reg.For(&endpoint.Endpoint{Name: name, Type: typ}) {
			out = append(out, o.Name)
		}
	}
	// The records themselves too: an alias A's ownership has a second form ("cname-")
	// that a bare record of its type does not ask for, whatever the managed types.
	for _, e := range slices.Concat(current, desired) {
		if e.Name == name && e.Type != endpoint.TypeTXT {
			for _, o := range reg.For(e) {
				out = append(out, o.Name)
			}
		}
	}
	return out
}

// subset returns copies of the records the planner needs to plan the touched names
// (desired are the records wanted in the zone there): every record at them, and the TXT
// records of their ownership and holds and the loose ones. names are the names of all.
func (m *zoneMirror) subset(touched map[string]bool, desired []*endpoint.Endpoint, reg changes.Registry, types []string) ([]*endpoint.Endpoint, map[string]bool) {
	names := make(map[string]bool, 4*len(touched))
	var out []*endpoint.Endpoint
	add := func(name string, onlyTXT bool) {
		for _, r := range m.byName[name] {
			if onlyTXT && r.Type != endpoint.TypeTXT {
				continue
			}
			// A copy without labels, as the cache lists it: the registry labels what
			// it reads.
			c := r.Clone()
			c.Labels = nil
			out = append(out, c)
		}
	}
	sorted := slices.Sorted(mapKeys(touched))
	for _, n := range sorted {
		names[n] = true
		add(n, false)
	}
	var extra []string
	for _, n := range sorted {
		extra = append(extra, ownershipNames(reg, n, m.byName[n], desired, types)...)
	}
	extra = append(extra, slices.Sorted(mapKeys(m.loose))...)
	slices.Sort(extra)
	for _, n := range slices.Compact(extra) {
		if !names[n] {
			names[n] = true
			add(n, true)
		}
	}
	return out, names
}

// apply puts a written batch into the copy, as the zone cache does.
func (m *zoneMirror) apply(b changes.Batch) {
	for _, c := range b {
		if c.Endpoint == nil {
			continue
		}
		s := cache.Stored(c.Endpoint) // the zone cache's rule, so that this copy lists as the cache does
		recs := m.byName[s.Name]
		i := slices.IndexFunc(recs, func(r *endpoint.Endpoint) bool { return r.Key() == s.Key() })
		switch {
		case c.Action == changes.Delete && i >= 0:
			recs = slices.Delete(recs, i, i+1)
		case c.Action == changes.Delete:
		case i >= 0:
			recs[i] = s
		default:
			recs = append(recs, s)
		}
		if len(recs) == 0 {
			delete(m.byName, s.Name)
		} else {
			m.byName[s.Name] = recs
		}
	}
}

// recordsAt returns the records of eps (sorted by name) named name.
func recordsAt(eps []*endpoint.Endpoint, name string) []*endpoint.Endpoint {
	i, _ := slices.BinarySearchFunc(eps, name, func(e *endpoint.Endpoint, n string) int { return strings.Compare(e.Name, n) })
	j := i
	for j < len(eps) && eps[j].Name == name {
		j++
	}
	return eps[i:j]
}

// patchResult returns last with the records at names replaced by at (sorted), and the
// problems of the changed objects (resources) replaced by theirs now (fresh).
func patchResult(last source.Result, names []string, at []*endpoint.Endpoint, resources map[string]bool, fresh map[string]source.Result) source.Result {
	out := source.Result{Endpoints: make([]*endpoint.Endpoint, 0, len(last.Endpoints)+len(at))}
	// Both are sorted by name first, and at holds records at names only: each name's run
	// of the last records is replaced by its run of at, the rest copied around them.
	prev, k := 0, 0
	for _, n := range names {
		i, _ := slices.BinarySearchFunc(last.Endpoints, n, func(e *endpoint.Endpoint, n string) int { return strings.Compare(e.Name, n) })
		j := i
		for j < len(last.Endpoints) && last.Endpoints[j].Name == n {
			j++
		}
		out.Endpoints = append(out.Endpoints, last.Endpoints[prev:i]...)
		for ; k < len(at) && at[k].Name == n; k++ {
			out.Endpoints = append(out.Endpoints, at[k])
		}
		prev = j
	}
	out.Endpoints = append(out.Endpoints, last.Endpoints[prev:]...)
	changed := func(ref endpoint.ObjectRef) bool {
		return ref.Kind == "Service" && resources[source.ServiceResource(ref.Namespace, ref.Name)]
	}
	out.Invalid = slices.DeleteFunc(slices.Clone(last.Invalid), func(e *endpoint.InvalidError) bool { return changed(e.Object) })
	out.Held = slices.DeleteFunc(slices.Clone(last.Held), func(h string) bool { return resources[h] })
	out.Pending = slices.DeleteFunc(slices.Clone(last.Pending), func(p source.Pending) bool { return changed(p.Object) })
	out.Skipped = slices.DeleteFunc(slices.Clone(last.Skipped), func(s source.Skipped) bool { return changed(s.Object) })
	out.Overridden = slices.DeleteFunc(slices.Clone(last.Overridden), func(s source.Skipped) bool { return changed(s.Object) })
	for _, r := range slices.Sorted(mapKeys(fresh)) {
		f := fresh[r]
		out.Invalid = append(out.Invalid, f.Invalid...)
		out.Held = append(out.Held, f.Held...)
		out.Pending = append(out.Pending, f.Pending...)
		out.Skipped = append(out.Skipped, f.Skipped...)
		out.Overridden = append(out.Overridden, f.Overridden...)
	}
	source.SortProblems(&out)
	return out
}

// patchConflicts returns last without the entries at names, with now's, in key order.
func patchConflicts(last, now []changes.Conflict, names map[string]bool) []changes.Conflict {
	out := slices.DeleteFunc(slices.Clone(last), func(c changes.Conflict) bool { return names[c.Key.Name] })
	if len(now) == 0 {
		return out
	}
	out = append(out, now...)
	slices.SortStableFunc(out, func(a, b changes.Conflict) int {
		return cmp.Or(strings.Compare(a.Key.Name, b.Key.Name), strings.Compare(a.Key.Type, b.Key.Type),
			strings.Compare(a.Key.SetIdentifier, b.Key.SetIdentifier))
	})
	return out
}

// patchUnzoned returns last without the names in touched, with now's, sorted.
func patchUnzoned(last []string, touched map[string]bool, now []string) []string {
	out := slices.DeleteFunc(slices.Clone(last), func(u string) bool {
		name, _, _ := strings.Cut(u, " ")
		return touched[name]
	})
	out = append(out, now...)
	slices.Sort(out)
	return slices.Compact(out)
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
