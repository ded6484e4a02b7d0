package route53

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// The fleet lever: a plan of several zones (spec.zones). Each zone is read, checked and
// written exactly as the lever of one zone does it (readZone, live.batch, the
// compare-and-swap retry, the lost-response recovery, the authority records of its names,
// the release): one live per zone, composed. Only what spans zones is the fleet's: which
// zone a record is in (the longest of spec.zones it is at or below), the weights all
// records must start from alike, and running the zones' requests in parallel, at most
// zonesInFlight at once.
//
// A step writes one change batch per zone; a zone whose changes exceed Route 53's limits
// of a batch (changes.Route53Limits) is written in as few batches as hold them, split
// between names: every batch carries, for each of its names, the members, their
// ownership records and the name's authority record, so that each is a compare-and-swap
// of what it rewrites and has a change of its own to follow to INSYNC. The write is done
// once every batch is INSYNC, followed in parallel.

// zonesInFlight bounds the zones read, the batches sent and the changes followed to INSYNC
// at once: Route 53 answers an account 5 requests a second, and the provider paces them;
// more in flight would only wait there.
const zonesInFlight = 10

// inParallel runs f(0) … f(n-1), at most zonesInFlight at once, and returns once every
// one has returned.
func inParallel(n int, f func(i int)) {
	if n == 1 {
		f(0)
		return
	}
	sem := make(chan struct{}, zonesInFlight)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// fleet is a plan of several zones as read: its zones' lives (parts, in spec.zones
// order; a zone with none of the plan's records is not read), and their union, which
// answers what the engine asks of the weights, members, TTLs and gates: each record is in
// one zone, so the union has each once.
type fleet struct {
	*live
	parts []*live
}

var _ lever.Snapshot = (*fleet)(nil)

// LogAttr names the zones.
func (f *fleet) LogAttr() slog.Attr { return slog.String("zones", zoneNames(f.parts)) }

// zoneNames renders the zones' names: "a.example.com,b.example.com".
func zoneNames(parts []*live) string {
	names := make([]string, len(parts))
	for i, l := range parts {
		names[i] = l.zone.Name
	}
	return strings.Join(names, ",")
}

// compose returns the fleet of parts.
func compose(parts []*live) *fleet {
	return &fleet{live: join(provider.Zone{}, parts), parts: parts}
}

// join returns the union of ls as one live in zone: their members, others and authority
// records in order, the runners they take over once each, measured again.
func join(zone provider.Zone, ls []*live) *live {
	if len(ls) == 1 && ls[0].zone == zone {
		return ls[0]
	}
	u := &live{zone: zone}
	for _, l := range ls {
		u.members = append(u.members, l.members...)
		u.others = append(u.others, l.others...)
		u.authority = append(u.authority, l.authority...)
		u.current = append(u.current, l.current...)
		u.authorityOf = append(u.authorityOf, l.authorityOf...)
		u.skipped = append(u.skipped, l.skipped...)
		for _, r := range l.takenOver {
			if !slices.Contains(u.takenOver, r) {
				u.takenOver = append(u.takenOver, r)
			}
		}
	}
	u.measure()
	return u
}

// only returns the part of l that holds names: their members and others, and their
// authority records (the runners taken over are l's, journaled once by the fleet).
func (l *live) only(names map[string]bool) *live {
	n := &live{zone: l.zone, takenOver: l.takenOver}
	for _, m := range l.members {
		if names[m.record.Name] {
			n.members = append(n.members, m)
		}
	}
	for _, o := range l.others {
		if names[o.record.Name] {
			n.others = append(n.others, o)
		}
	}
	for i, name := range l.authorityOf {
		if names[name] {
			n.authority = append(n.authority, l.authority[i])
			n.current = append(n.current, l.current[i])
			n.authorityOf = append(n.authorityOf, name)
		}
	}
	n.measure()
	return n
}

// fleetLever is the Route 53 lever of a plan of several zones.
type fleetLever struct {
	lever.Base
	p   *spec.Plan
	dns DNS
	reg *registry.TXT
	// limits bound each batch; the zero value is Route 53's.
	limits changes.Limits
	// insync are the change ids seen INSYNC: a write is followed until every one of its
	// changes is, and each is asked about until it is. follow are, by a write's first
	// change id, the changes to ask about: each zone's last, whose INSYNC covers the
	// zone's earlier ones (a Written this lever did not make: every change of it).
	mu     sync.Mutex
	insync map[string]bool
	follow map[string][]string
}

var _ lever.Typed[*fleet] = (*fleetLever)(nil)

// zonePlan is one zone of the plan: where it is, and the plan of its records alone.
type zonePlan struct {
	zone provider.Zone
	p    *spec.Plan
}

// findZones finds each of the plan's zones among the provider's, by name.
func (d *fleetLever) findZones(ctx context.Context) ([]provider.Zone, error) {
	zones, err := d.dns.Zones(ctx)
	if err != nil {
		return nil, fmt.Errorf("list zones: %w", err)
	}
	out := make([]provider.Zone, len(d.p.Zones))
	for i, name := range d.p.Zones {
		z, err := provider.FindZone(zones, name, "")
		var le *provider.ZoneLookupError
		if errors.As(err, &le) && len(le.Matches) > 1 {
			return nil, fmt.Errorf("spec.zones[%d] %s: %d hosted zones have this name (%s): a plan of several zones finds each by name; move this one with a plan of its own that sets spec.zoneID",
				i, name, len(le.Matches), strings.Join(le.IDs(), ", "))
		}
		if err != nil {
			return nil, fmt.Errorf("spec.zones[%d] %s: %w", i, name, err)
		}
		out[i] = z
	}
	return out, nil
}

// plans splits the plan's records by zone: the zones that have some, in spec.zones order.
func (d *fleetLever) plans(ctx context.Context) ([]zonePlan, error) {
	byZone := map[string][]spec.Record{}
	for _, r := range d.p.Records {
		z := spec.ZoneOf(d.p.Zones, r.Name)
		if z == "" {
			// The plan's validation refuses such a record: this is a plan built otherwise.
			return nil, fmt.Errorf("spec.records: %s %s is in none of spec.zones (%s)", r.Name, r.Type, strings.Join(d.p.Zones, ", "))
		}
		byZone[z] = append(byZone[z], r)
	}
	zones, err := d.findZones(ctx)
	if err != nil {
		return nil, err
	}
	var out []zonePlan
	for i, name := range d.p.Zones {
		recs := byZone[name]
		if len(recs) == 0 {
			continue
		}
		sub := *d.p
		sub.Zone, sub.ZoneID, sub.Zones, sub.Records = name, zones[i].ID, nil, recs
		out = append(out, zonePlan{zone: zones[i], p: &sub})
	}
	return out, nil
}

// Kind is LeverRoute53.
func (d *fleetLever) Kind() string { return lever.Route53 }

// Read reads every zone of the plan (readZone), in parallel. A zone that cannot be read,
// or whose read stops the cutover (another runner holds it, a member is gone), fails the
// read, the first in spec.zones order; the zones' other problems are listed together.
func (d *fleetLever) Read(ctx context.Context, o lever.ReadOptions) (*fleet, error) {
	plans, err := d.plans(ctx)
	if err != nil {
		return nil, &lever.ReadError{Err: err}
	}
	return d.readPlans(ctx, plans, o)
}

// readPlans reads the zones of plans in parallel and composes them.
func (d *fleetLever) readPlans(ctx context.Context, plans []zonePlan, o lever.ReadOptions) (*fleet, error) {
	parts := make([]*live, len(plans))
	errs := make([]error, len(plans))
	inParallel(len(plans), func(i int) {
		parts[i], errs[i] = readZone(ctx, d.dns, d.reg, plans[i].p, plans[i].zone, o)
	})
	var problems []string
	for _, err := range errs {
		var nr *lever.NotReadyError
		switch {
		case err == nil:
		case errors.As(err, &nr) && !nr.Unmeasured:
			for _, pr := range nr.Problems {
				// A step's even split is said once, not once per zone.
				if !slices.Contains(problems, pr) {
					problems = append(problems, pr)
				}
			}
		default:
			return nil, err
		}
	}
	if len(problems) > 0 {
		return nil, &lever.NotReadyError{Problems: problems}
	}
	return compose(parts), nil
}

// StartProblems are the single zone's (differingWeights, and with spec.ttl.lower the
// sets it cannot lower) over every zone: a cutover moves every record from one weight.
func (d *fleetLever) StartProblems(f *fleet) []string {
	return (&dnsLever{p: d.p}).StartProblems(f.live)
}

// Check refuses a TTL write that would have to rewrite a set nobody owns, in any zone.
func (d *fleetLever) Check(f *fleet, c lever.Change) []string {
	return f.untouchable(c.TTLs)
}

// unit is one batch of a write: a zone's records, or those of some of its names when the
// zone's changes exceed a batch (names: nil for every name of the zone).
type unit struct {
	l     *live
	names map[string]bool
	// batch is what it sent, id its change, after what its zone is once it is in effect.
	batch changes.Batch
	id    string
	err   error
}

// split cuts f into the write's units: one per zone, and more where a zone's batch
// exceeds the limits, packed name by name (changes.Pack: a name never straddles two).
func (d *fleetLever) split(f *fleet, c lever.Change) ([]*unit, error) {
	lim := d.limits
	if lim == (changes.Limits{}) {
		lim = changes.Route53Limits
	}
	var out []*unit
	for _, part := range f.parts {
		b := part.batch(c.Weights, c.TTLs)
		if lim.Fits(lim.BatchCost(b)) {
			out = append(out, &unit{l: part})
			continue
		}
		var units []changes.Unit
		for _, name := range part.authorityOf {
			sub := part.only(map[string]bool{name: true})
			units = append(units, changes.Unit{Name: name, Changes: sub.batch(c.Weights, c.TTLs)})
		}
		batches, tooBig := changes.Pack(units, lim)
		if len(tooBig) > 0 {
			n, chars := lim.BatchCost(tooBig[0].Changes)
			return nil, fmt.Errorf("zone %s: the %d changes of %s (%d values, %d value characters) exceed one change batch (%d values, %d value characters)",
				part.zone.Name, len(tooBig[0].Changes), tooBig[0].Name, n, chars, lim.MaxRecords, lim.MaxValueChars)
		}
		for _, bu := range batches {
			names := map[string]bool{}
			for _, u := range bu {
				names[u.Name] = true
			}
			out = append(out, &unit{l: part.only(names), names: names})
		}
	}
	return out, nil
}

// Write sends the weights (and TTLs) of every zone, one batch per unit (split), the units
// in parallel, each as the lever of one zone writes its batch: a compare-and-swap built
// again from a fresh read when refused because the zone changed (its drift checked on its
// own members: the other zones may have landed already), written again when its answer,
// and change id, was lost. A batch that fails fails the write: with *PartialWriteError,
// naming the zones written, when others had landed (a resume writes the step again, an
// abort writes every zone back). A zone's batches go one after the other, the zones in
// parallel.
func (d *fleetLever) Write(ctx context.Context, f *fleet, c lever.Change, env lever.Env[*fleet]) (lever.Written, error) {
	units, err := d.split(f, c)
	if err != nil {
		return lever.Written{}, fmt.Errorf("%s: %w", env.What, err)
	}
	if len(units) == 0 {
		return lever.Written{}, fmt.Errorf("%s: cutover %s has no record in any of spec.zones to write", env.What, d.p.Name)
	}
	if err := env.BeforeSend(f); err != nil {
		return lever.Written{}, err
	}
	// The runner's Read, Drift and BeforeSend are not made to be called at once.
	var mu sync.Mutex
	// Once a batch fails, no zone not yet sent is written: a step's weights land in the
	// zones already sent at most, never in the rest of a fleet that is no longer measured
	// (the run stops on the error).
	var stop atomic.Bool
	zones := byZone(units)
	inParallel(len(zones), func(i int) {
		// A zone's batches go one after the other: Route 53 applies a zone's changes in
		// order, so the last one's INSYNC covers the zone's (InEffect asks after it only).
		for _, u := range zones[i] {
			if stop.Load() {
				return
			}
			if d.writeUnit(ctx, u, c, env, &mu); u.err != nil {
				stop.Store(true)
				return
			}
		}
	})
	var landed, failed []string
	var errs []error
	var ids []string
	for _, u := range units {
		if u.err != nil {
			failed = append(failed, u.l.zone.Name)
			errs = append(errs, u.err)
			continue
		}
		if u.id == "" && u.batch == nil {
			failed = append(failed, u.l.zone.Name) // not sent: an earlier batch of its zone failed
			continue
		}
		landed = append(landed, u.l.zone.Name)
		ids = append(ids, u.id)
	}
	if len(errs) > 0 {
		// The first error stands for the others: a drift, a held record or a member gone
		// is the engine's to act on, and its next read finds them all again.
		if len(landed) > 0 {
			return lever.Written{}, &PartialWriteError{Err: errs[0], Written: slices.Compact(landed), Failed: slices.Compact(failed), IDs: ids}
		}
		return lever.Written{}, errs[0]
	}
	calls := 0
	for _, u := range units {
		calls += len(u.batch)
	}
	var follow []string
	for _, zu := range zones {
		follow = append(follow, zu[len(zu)-1].id)
	}
	d.mu.Lock()
	if d.follow == nil {
		d.follow = map[string][]string{}
	}
	d.follow[ids[0]] = follow
	d.mu.Unlock()
	w := lever.Written{ID: ids[0], Calls: calls, After: afterUnits(f, units),
		Detail:  fmt.Sprintf("%d changes in %d batches over %d zones", calls, len(units), len(f.parts)),
		Pending: fmt.Sprintf("changes %s not all INSYNC", strings.Join(ids, " "))}
	if len(ids) > 1 {
		// The journal's written entry keeps the first as its changeID, as a write of one
		// zone's, and every one in its data: the journal's format is unchanged.
		w.IDs = ids
		w.Data, _ = json.Marshal(WrittenData{ChangeIDs: ids})
	}
	return w, nil
}

// WrittenData is what the journal's written entry of a write of several batches keeps
// (its data): every change id, the first being the entry's changeID.
type WrittenData struct {
	ChangeIDs []string `json:"changeIDs"`
}

// PartialWriteError is a write of several zones that stopped after some of them had the
// new weights: Route 53 has no transaction over several zones. Each zone stands at the
// weights of one step of the plan, the journal holds the step's intent, and `run --resume`
// writes the step again (weights are absolute), `abort` writes every zone back.
type PartialWriteError struct {
	// Err is the first zone's error that stopped the write.
	Err error
	// Written are the zones whose batches landed, with their changes; Failed the others
	// (a zone split in several batches may be in both: some of its names moved).
	Written, Failed []string
	IDs             []string
}

// Error says where the zones stand and what continues.
func (e *PartialWriteError) Error() string {
	return fmt.Sprintf("%v; zones %s have the new weights (changes %s), zones %s the old ones (Route 53 has no transaction over several zones): "+
		"`crossfade cutover run --resume` writes the step again, `crossfade cutover abort` rolls every zone back",
		e.Err, strings.Join(e.Written, ","), strings.Join(e.IDs, " "), strings.Join(e.Failed, ","))
}

// Unwrap gives the zone's error.
func (e *PartialWriteError) Unwrap() error { return e.Err }

// writeUnit sends u's batch as dnsLever.Write sends a zone's (casWrite), and sets u.batch
// and u.id, or u.err. Its errors name the zone; the runner's BeforeSend is called by Write
// before the units are sent and by reread on every read again, and drift is reread's.
func (d *fleetLever) writeUnit(ctx context.Context, u *unit, c lever.Change, env lever.Env[*fleet], mu *sync.Mutex) {
	w := casWrite{dns: d.dns, c: c, what: env.What, comment: env.Comment, log: env.Log,
		prefix:  fmt.Sprintf("%s: zone %s", env.What, u.l.zone.Name),
		lostMsg: "write landed but its change id was lost: writing the authority records again to follow one to INSYNC",
		reread: func(ctx context.Context, refused bool) (*live, error) {
			return d.reread(ctx, u, env, mu, refused)
		}}
	l, batch, id, err := w.send(ctx, u.l)
	if err != nil {
		u.err = err
		return
	}
	u.l, u.batch, u.id = l, batch, id
}

// reread reads the plan again through the runner (env.Read: its checks, and every zone,
// which is what its BeforeSend keeps) and returns u's part of it; with drift, the drift
// of u's members is an error (the other zones' may have landed). The runner's callbacks
// are called one unit at a time.
func (d *fleetLever) reread(ctx context.Context, u *unit, env lever.Env[*fleet], mu *sync.Mutex, drift bool) (*live, error) {
	mu.Lock()
	defer mu.Unlock()
	fresh, err := env.Read(ctx)
	if err != nil {
		return nil, err
	}
	var part *live
	for _, p := range fresh.parts {
		if p.zone == u.l.zone {
			part = p
		}
	}
	if part == nil {
		return nil, fmt.Errorf("zone %s is no longer read", u.l.zone)
	}
	if u.names != nil {
		part = part.only(u.names)
	}
	if drift {
		if d := env.Drift(compose([]*live{part})); d != nil {
			return nil, d
		}
	}
	if err := env.BeforeSend(fresh); err != nil {
		return nil, err
	}
	return part, nil
}

// byZone groups units by zone, in order.
func byZone(units []*unit) [][]*unit {
	var out [][]*unit
	for i, u := range units {
		if i > 0 && u.l.zone == units[i-1].l.zone {
			out[len(out)-1] = append(out[len(out)-1], u)
			continue
		}
		out = append(out, []*unit{u})
	}
	return out
}

// afterUnits is f as it will be once every unit's batch is applied: each zone's units
// joined again.
func afterUnits(f *fleet, units []*unit) *fleet {
	var parts []*live
	for _, part := range f.parts {
		var ls []*live
		for _, u := range units {
			if u.l.zone == part.zone {
				ls = append(ls, u.l.after(u.batch))
			}
		}
		parts = append(parts, join(part.zone, ls))
	}
	return compose(parts)
}

// InEffect reports whether every change of w is INSYNC, asking about those not yet seen
// INSYNC, in parallel.
func (d *fleetLever) InEffect(ctx context.Context, w lever.Written, _ *fleet) (bool, error) {
	ids := w.IDs
	if len(ids) == 0 && w.ID != "" {
		ids = []string{w.ID}
	}
	d.mu.Lock()
	if f, ok := d.follow[w.ID]; ok {
		ids = f
	}
	var pending []string
	for _, id := range ids {
		if !d.insync[id] {
			pending = append(pending, id)
		}
	}
	d.mu.Unlock()
	ok := make([]bool, len(pending))
	errs := make([]error, len(pending))
	inParallel(len(pending), func(i int) { ok[i], errs[i] = d.dns.InSync(ctx, pending[i]) })
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.insync == nil {
		d.insync = map[string]bool{}
	}
	all := true
	for i, id := range pending {
		if ok[i] {
			d.insync[id] = true
		} else {
			all = false
		}
	}
	return all, errors.Join(errs...)
}

// DryRun renders every batch of the write as the provider would send it, one after the
// other, each headed by its zone: `aws route53 change-resource-record-sets` takes each
// with its zone's --hosted-zone-id.
func (d *fleetLever) DryRun(ctx context.Context, f *fleet, c lever.Change) (lever.Rendered, error) {
	units, err := d.split(f, c)
	if err != nil {
		return lever.Rendered{}, err
	}
	var doc bytes.Buffer
	calls := 0
	for i, u := range units {
		u.batch = u.l.batch(c.Weights, c.TTLs)
		calls += len(u.batch)
		b, err := d.dns.DryRun(ctx, u.l.zone, u.batch)
		if err != nil {
			return lever.Rendered{}, err
		}
		if i > 0 {
			doc.WriteByte('\n')
		}
		fmt.Fprintf(&doc, "# batch %d of %d: zone %s, --hosted-zone-id %s, %d changes\n", i+1, len(units), u.l.zone.Name, u.l.zone.ID, len(u.batch))
		doc.Write(bytes.TrimRight(b, "\n"))
	}
	return lever.Rendered{Doc: doc.Bytes(), Calls: calls, After: afterUnits(f, units)}, nil
}

// Describe is the single zone's over every zone; the preview's zone names them all (its
// id, ZONE_ID, is each batch's own), and a note says how many records each has.
func (d *fleetLever) Describe(ctx context.Context, f *fleet, pv *lever.Description) error {
	if err := (&dnsLever{p: d.p}).Describe(ctx, f.live, pv); err != nil {
		return err
	}
	pv.Zone = provider.Zone{Name: strings.ReplaceAll(zoneNames(f.parts), ",", ", "), ID: "ZONE_ID"}
	var zs []string
	for _, part := range f.parts {
		zs = append(zs, fmt.Sprintf("%s (%s): %d records", part.zone.Name, part.zone.ID, len(part.members)/2))
	}
	pv.Notes = append([]string{fmt.Sprintf("%d zones, each step one change batch per zone (more only where a zone's changes exceed a batch), sent in parallel: %s",
		len(f.parts), strings.Join(zs, "; "))}, pv.Notes...)
	return nil
}

// Summary names the zones, the records, the clusters and the TTL.
func (d *fleetLever) Summary(f *fleet) string {
	zs := make([]string, len(f.parts))
	for i, part := range f.parts {
		zs[i] = part.zone.String()
	}
	return fmt.Sprintf("zones %s, %d records, from %s to %s, TTL %ds", strings.Join(zs, ", "), len(d.p.Records), d.p.From, d.p.To, f.maxTTL)
}

// DriftCause is lever.DriftCause.
func (d *fleetLever) DriftCause() string { return lever.DriftCause }

// Select selects, in every zone of the plan, the weighted A, AAAA and CNAME record sets
// with a member for from and one for to (spec.select.allWeighted), each from the zone it
// is in (the longest of spec.zones: a name a parent zone also holds is the child's), in
// name and type order. A selection that finds nothing in any zone is refused.
func (d *fleetLever) Select(ctx context.Context) (lever.Selection, error) {
	if d.dns == nil {
		return lever.Selection{}, fmt.Errorf("cutover %s selects the zones' weighted records (spec.select), and no DNS provider is configured", d.p.Name)
	}
	zones, err := d.findZones(ctx)
	if err != nil {
		return lever.Selection{}, &lever.ReadError{Err: err}
	}
	found := make([][]spec.Record, len(zones))
	errs := make([]error, len(zones))
	inParallel(len(zones), func(i int) {
		recs, err := d.dns.Records(ctx, zones[i])
		if err != nil {
			errs[i] = &lever.ReadError{Err: fmt.Errorf("zone %s: %w", zones[i], err)}
			return
		}
		name := d.p.Zones[i]
		found[i] = selectWeighted(recs, d.p.From, d.p.To, func(n string) bool { return spec.ZoneOf(d.p.Zones, n) == name })
	})
	if err := cmp.Or(errs...); err != nil {
		return lever.Selection{}, err
	}
	var s lever.Selection
	for _, rs := range found {
		s.Records = append(s.Records, rs...)
	}
	if len(s.Records) == 0 {
		return lever.Selection{}, &lever.NotReadyError{Problems: []string{fmt.Sprintf(
			"spec.select: zones %s have no weighted record set with members for both %s and %s: nothing to move", strings.Join(d.p.Zones, ", "), d.p.From, d.p.To)}}
	}
	slices.SortFunc(s.Records, func(a, b spec.Record) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Type, b.Type))
	})
	return s, nil
}

// Release is the single zone's release over every zone: each zone's authority records
// deleted by a batch of its own, in parallel (release).
func (d *fleetLever) Release(ctx context.Context, r lever.ReleaseRequest) (lever.ReleaseResult, error) {
	return release(ctx, d.p, d.dns, r, func(ctx context.Context, ro lever.ReadOptions) (*live, []*live, error) {
		f, err := d.Read(ctx, ro)
		if err != nil {
			return nil, nil, err
		}
		return f.live, f.parts, nil
	})
}
