package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Syncer reconciles desired records into a provider's zones once per call.
type Syncer struct {
	// Provider reads and writes the zones.
	Provider provider.Provider
	// Registry reads and writes ownership: a *registry.TXT, or the CRD registry's
	// (crdstore.Provider.Registry), whose conflict advice names DNSRecords.
	Registry changes.Registry
	// Policy limits what a sync may change.
	Policy changes.Policy
	// DomainFilter keeps the desired and current names it matches; the provider filters
	// zones itself.
	DomainFilter endpoint.DomainFilter
	// ManagedTypes are the record types planned; nil means A, AAAA, CNAME.
	ManagedTypes []string
	// DryRun plans but sends nothing; the batches are in the report.
	DryRun bool
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// Refusals, when set, holds back names the provider refused until their backoff
	// ends or their changes change; nil sends every planned name every sync.
	Refusals *Refusals
	// QuietConflicts logs conflicts at debug level: a controller reports each one once,
	// through its EventReporter, rather than at every reconcile.
	QuietConflicts bool
	// Guard holds back mass deletions; the zero value is on, with the default limits.
	Guard DeleteGuard
}

// ZoneReport is what a sync did, or would do, in one zone.
type ZoneReport struct {
	Zone provider.Zone
	// Changes holds the batches, conflicts and counts.
	Changes *changes.Set
	// Applied is how many change batches were written (0 in a dry run): more than the
	// plan's batches when a refused batch was split.
	Applied int
	// Written counts the changes of the batches written, by action (ownership records
	// included).
	Written map[changes.Action]int
	// Desired is how many desired records the zone was asked to hold.
	Desired int
	// Refused are the names whose changes the provider refused (Route 53's
	// InvalidChangeBatch) or could not build, each with the provider's reason: every other
	// name of the zone was still written.
	Refused []changes.Conflict
	// DryRun holds, in a dry run, each batch as the provider would send it (for Route 53,
	// the AWS CLI's --change-batch JSON), when the provider can render it.
	DryRun [][]byte
	// Err is the first failure in the zone other than a refusal (a throttled, failed or
	// cancelled call); the batches after a failed one are still tried.
	Err error
	// Weighted are the names where this owner publishes (or is asked to publish) weighted
	// record sets, each with the hold a cutover has on it as the listing showed it
	// (registry.Authority.State; "" when none): what a HoldProber watches.
	Weighted map[string]string
	// NameServers are the zone's apex NS values as listed: where a HoldProber asks.
	NameServers []string
	// HeldDeletions are the deletions the deletion guard held in the zone; nil when it
	// held none.
	HeldDeletions *HeldDeletions

	// heldUntil says, by the key of a Refused entry, when its name is sent again; absent
	// when the next sync sends it.
	heldUntil map[endpoint.Key]time.Time
	// failed are the names of the units whose write failed (they may not have landed).
	failed []string
	// current is the zone as listed for the plan, and applied the batches written since:
	// what a controller's incremental reconcile plans against next (incremental.go).
	current []*endpoint.Endpoint
	applied []changes.Batch
}

// Report is the outcome of one sync.
type Report struct {
	Zones []ZoneReport
	// KeptAll is true when the sync deleted nothing because some input was unreadable.
	KeptAll bool
	// Unzoned are desired names no managed zone can hold.
	Unzoned []string
	// Unplanned are the ids of the zones whose records could not be listed (their
	// ZoneReport has no Plan): nothing is known of them this time, so what earlier syncs
	// found there (conflicts, refusals, notes) is not known to be gone.
	Unplanned []string
	// Incremental is true when a controller re-planned only the names its objects'
	// changes touched (Config.Incremental); the zones' reports then hold the conflicts,
	// notes and kept records of the last full plan at every other name.
	Incremental bool
}

// Conflicts returns every zone's conflicts in zone order.
func (r *Report) Conflicts() []changes.Conflict {
	var out []changes.Conflict
	for _, z := range r.Zones {
		if z.Changes != nil {
			out = append(out, z.Changes.Conflicts...)
		}
		out = append(out, z.Refused...)
	}
	return out
}

// Kept returns every zone's owned records that were not deleted although no source
// wants them now, in zone order.
func (r *Report) Kept() []changes.Conflict {
	var out []changes.Conflict
	for _, z := range r.Zones {
		if z.Changes != nil {
			out = append(out, z.Changes.Kept...)
		}
	}
	return out
}

// Refused counts the names the provider refused, across zones.
func (r *Report) Refused() int {
	n := 0
	for _, z := range r.Zones {
		n += len(z.Refused)
	}
	return n
}

// Notes returns every zone's records written otherwise than asked, in zone order.
func (r *Report) Notes() []changes.Conflict {
	var out []changes.Conflict
	for _, z := range r.Zones {
		if z.Changes != nil {
			out = append(out, z.Changes.Notes...)
		}
	}
	return out
}

// Err joins the zones' errors, nil when every zone succeeded.
func (r *Report) Err() error {
	var errs []error
	for _, z := range r.Zones {
		if z.Err != nil {
			errs = append(errs, z.Err)
		}
	}
	return errors.Join(errs...)
}

// Sync plans every zone and applies its batches in order. A zone that fails does not stop
// the others; a failed batch does not stop the later batches of its zone, which touch
// other names (a name's changes never span two batches); and a batch the provider refuses
// is split so that every name but the ones at fault is still written.
func (s *Syncer) Sync(ctx context.Context, desired []*endpoint.Endpoint) (*Report, error) {
	return s.SyncKeeping(ctx, desired, Keep{})
}

// Keep says which owned records a sync keeps although no source wants them now (safety
// rule 6: bad input loses nothing else). A controller or a run that reads its objects
// must say so every time: an object that turned invalid no longer yields its records,
// and a list or a file that could not be read yields nothing at all.
type Keep struct {
	// Resources are the objects ("service/default/web") whose input is invalid now: the
	// records they own stay as they are until they are fixed or deleted.
	Resources []string
	// All keeps every owned record the sync would delete: some input could not be read,
	// so a record missing from the rest may only be unread. Creates and updates go on.
	All bool
}

// SyncKeeping is Sync that keeps what keep names.
func (s *Syncer) SyncKeeping(ctx context.Context, desired []*endpoint.Endpoint, keep Keep) (*Report, error) {
	log := s.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	zones, err := s.Provider.Zones(ctx)
	if err != nil {
		return nil, fmt.Errorf("list zones: %w", err)
	}
	// Plan in the form the provider stores records (Route 53 writes an alias CNAME as an
	// alias A), so that planning compares like with like.
	desired = s.Provider.AdjustEndpoints(desired)
	byZone, unzoned := assign(desired, zones, s.DomainFilter)
	rep := &Report{Unzoned: unzoned, KeptAll: keep.All, Zones: make([]ZoneReport, len(zones))}
	// A name that moves into a more specific zone (one created since it was published)
	// is deleted from the zone it leaves only once its new zone holds it: the deepest
	// zones are synced first, and what they could not take stays where it answers now.
	moving := map[string]string{}
	for _, i := range deepestFirst(zones) {
		z := zones[i]
		rep.Zones[i] = s.syncZone(ctx, z, byZone[z.ID], keep, moving, rep, log)
		notTaken(rep.Zones[i], byZone[z.ID], moving)
	}
	unplanned := make(map[string]bool, len(rep.Unplanned))
	for _, id := range rep.Unplanned {
		unplanned[id] = true
	}
	s.Refusals.prune(unplanned)
	return rep, nil
}

// deepestFirst returns the indexes of zones, the zones with the most labels first, in
// their order otherwise.
func deepestFirst(zones []provider.Zone) []int {
	order := make([]int, len(zones))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return strings.Count(zones[b].Name, ".") - strings.Count(zones[a].Name, ".")
	})
	return order
}

// notTaken records in moving, for each name assigned to the zone of zr, why that zone
// does not hold it after the sync, if it does not: the zone could not be listed, or the
// name's records were refused (before sending or by the provider) or their write failed.
func notTaken(zr ZoneReport, assigned []*endpoint.Endpoint, moving map[string]string) {
	names := make(map[string]bool, len(assigned))
	for _, d := range assigned {
		names[d.Name] = true
	}
	add := func(name, why string) {
		if names[name] {
			if _, seen := moving[name]; !seen {
				moving[name] = fmt.Sprintf("its records move to zone %s, %s", zr.Zone, why)
			}
		}
	}
	if zr.Changes == nil {
		for name := range names {
			add(name, "whose records could not be listed")
		}
		return
	}
	for _, c := range slices.Concat(zr.Changes.Conflicts, zr.Refused) {
		add(c.Key.Name, "which refused them: "+c.Reason)
	}
	for _, name := range zr.failed {
		add(name, "where writing them failed")
	}
}

// planInput is what the planner is given for zone z: the same for a full reconcile and
// an incremental one (over the records of the names it touched), so that the two plan
// alike.
func (s *Syncer) planInput(z provider.Zone, desired, current []*endpoint.Endpoint, keep Keep, keepNames map[string]string) changes.Input {
	return changes.Input{
		Desired:      desired,
		Current:      current,
		Registry:     s.Registry,
		Policy:       s.Policy,
		ManagedTypes: s.ManagedTypes,
		Limits:       s.Provider.Limits(),
		DomainFilter: s.DomainFilter,
		Zone:         z.Name,
		Keep:         keep.Resources,
		KeepAll:      keep.All,
		KeepNames:    keepNames,
	}
}

// syncZone plans zone z and applies its batches; moving names the owned records kept
// because their name moves to a more specific zone that has not taken it.
func (s *Syncer) syncZone(ctx context.Context, z provider.Zone, desired []*endpoint.Endpoint, keep Keep, moving map[string]string, rep *Report, log *slog.Logger) ZoneReport {
	zr := ZoneReport{Zone: z, Desired: len(desired)}
	current, err := s.Provider.Records(ctx, z)
	if err != nil {
		zr.Err = fmt.Errorf("zone %s: list records: %w", z, err)
		rep.Unplanned = append(rep.Unplanned, z.ID)
		log.Error("list records", "zone", z.Name, "zone_id", z.ID, "err", err)
		return zr
	}
	var keepNames map[string]string
	for name, why := range moving {
		if name != z.Name && endpoint.InDomain(name, z.Name) {
			if keepNames == nil {
				keepNames = map[string]string{}
			}
			keepNames[name] = why
		}
	}
	in := s.planInput(z, desired, current, keep, keepNames)
	zr.Changes = changes.Calculate(in)
	zr.current = current
	s.guard(ctx, &zr, in, current, log)
	// Calculate has labelled current with its owners.
	zr.Weighted, zr.NameServers = weightedNames(desired, current, s.Registry.OwnerID()), apexNS(current, z.Name)
	conflictLevel := slog.LevelWarn
	if s.QuietConflicts {
		conflictLevel = slog.LevelDebug
	}
	for _, c := range zr.Changes.Conflicts {
		log.Log(ctx, conflictLevel, "conflict", "zone", z.Name, "record", c.Key.String(), "reason", c.Reason, "advice", c.Advice)
	}
	// Notes stand as long as their object asks for what cannot be written: a controller
	// reports them once, as conflicts, through its EventReporter.
	for _, c := range zr.Changes.Notes {
		log.Log(ctx, conflictLevel, "written otherwise than asked", "zone", z.Name, "record", c.Key.String(), "reason", c.Reason, "advice", c.Advice)
	}
	if s.DryRun {
		if err := s.render(ctx, &zr); err != nil {
			zr.Err = err
		}
	} else {
		// Every batch goes through holdBack even once ctx is done (WriteUnits then
		// sends nothing): a held name not looked at would be forgotten by prune.
		for i, units := range zr.Changes.Units {
			units = s.holdBack(&zr, units)
			s.apply(ctx, &zr, units, log.With("zone", z.Name, "zone_id", z.ID, "batch", i))
		}
	}
	return zr
}

// holdBack returns the units not held back by an earlier refusal; the held ones are
// reported as refused again, in the very words of their refusal (which say when they are
// sent again): holding a name back is no news, and must not read as some.
func (s *Syncer) holdBack(zr *ZoneReport, units []changes.Unit) []changes.Unit {
	if s.Refusals == nil {
		return units
	}
	var out []changes.Unit
	for _, u := range units {
		held, reason, until := s.Refusals.held(zr.Zone.ID, u)
		if !held {
			out = append(out, u)
			continue
		}
		zr.addRefused(refusal(u, reason, until), until)
	}
	return out
}

// apply writes one batch of units into the zone's report.
func (s *Syncer) apply(ctx context.Context, zr *ZoneReport, units []changes.Unit, log *slog.Logger) {
	WriteUnits(ctx, s.Provider, zr.Zone, units, UnitOutcomes{
		Applied: func(_ []changes.Unit, batch changes.Batch) {
			zr.applied = append(zr.applied, batch)
			zr.Applied++
			if zr.Written == nil {
				zr.Written = map[changes.Action]int{}
			}
			for _, c := range batch {
				zr.Written[c.Action]++
			}
		},
		Refused: func(u changes.Unit, reason string) {
			zr.refuse(u, reason, s.Refusals.refused(zr.Zone.ID, u, reason), log)
		},
		Failed: func(units []changes.Unit, batch changes.Batch, err error) {
			for _, u := range units {
				zr.failed = append(zr.failed, u.Name)
			}
			if zr.Err == nil {
				zr.Err = fmt.Errorf("zone %s: %d changes of %d names: %w", zr.Zone, len(batch), len(units), err)
			}
		},
	}, log)
}

// UnitOutcomes are told what became of each unit WriteUnits was given: each unit ends up
// in exactly one Applied batch, one Refused call, or one Failed batch.
type UnitOutcomes struct {
	// Applied is called for each batch the provider accepted.
	Applied func(units []changes.Unit, batch changes.Batch)
	// Refused is called for each unit the provider refused alone, or could not build.
	Refused func(u changes.Unit, reason string)
	// Failed is called for a batch whose write failed otherwise (throttled, failed,
	// cancelled): its units may or may not have landed.
	Failed func(units []changes.Unit, batch changes.Batch, err error)
}

// WriteUnits writes units to zone as one batch. When the provider refuses it (Route 53
// refuses a whole batch for one bad change), the units at fault are found and reported,
// and the others are written in the same call: one bad name must never keep a zone from
// being published, sync after sync. The units Route 53's reasons name are set aside
// first; what is still refused is halved until each refused unit stands alone, which
// keeps the number of calls near the floor of one per bad name plus one.
func WriteUnits(ctx context.Context, p provider.Provider, zone provider.Zone, units []changes.Unit, out UnitOutcomes, log *slog.Logger) {
	if len(units) == 0 || ctx.Err() != nil {
		return
	}
	batch := changes.Changes(units)
	log.Debug("writing batch", "names", len(units), "changes", len(batch))
	err := p.Apply(ctx, zone, batch)
	if err == nil {
		log.Debug("applied batch", "names", len(units), "changes", len(batch))
		out.Applied(units, batch)
		return
	}
	var inv *provider.InvalidChangeError
	var rej *provider.RejectedError
	switch {
	case errors.As(err, &inv):
		at := unitAt(units, inv.Index)
		out.Refused(units[at], "cannot be sent: "+inv.Err.Error())
		WriteUnits(ctx, p, zone, slices.Delete(slices.Clone(units), at, at+1), out, log)
	case !errors.As(err, &rej):
		log.Error("apply batch", "names", len(units), "changes", len(batch), "err", err)
		out.Failed(units, batch, err)
	case len(units) == 1:
		out.Refused(units[0], "refused by the provider: "+rej.Error())
	default:
		hit, rest := named(units, rej.Messages)
		if len(hit) > 0 && len(rest) > 0 {
			WriteUnits(ctx, p, zone, rest, out, log)
			// Each named unit alone: Route 53 may name a unit that is refused only
			// beside another one.
			for _, u := range hit {
				WriteUnits(ctx, p, zone, []changes.Unit{u}, out, log)
			}
			return
		}
		half := len(units) / 2
		WriteUnits(ctx, p, zone, units[:half], out, log)
		WriteUnits(ctx, p, zone, units[half:], out, log)
	}
}

// refuse reports a unit the provider would not take, held back until until (zero: not
// held back).
func (zr *ZoneReport) refuse(u changes.Unit, reason string, until time.Time, log *slog.Logger) {
	c := refusal(u, reason, until)
	zr.addRefused(c, until)
	log.Error("change refused", "record", c.Key.String(), "name", u.Name, "resources", u.Resources, "reason", reason)
}

func (zr *ZoneReport) addRefused(c changes.Conflict, until time.Time) {
	zr.Refused = append(zr.Refused, c)
	if !until.IsZero() {
		if zr.heldUntil == nil {
			zr.heldUntil = map[endpoint.Key]time.Time{}
		}
		zr.heldUntil[c.Key] = until
	}
}

// refusal describes a refused unit as a conflict on its first non-TXT record. until is
// when the unit is sent again, zero when the next sync sends it; the refusal and every
// sync that holds the unit back until then describe it alike.
func refusal(u changes.Unit, reason string, until time.Time) changes.Conflict {
	key := u.Changes[0].Endpoint.Key()
	for _, c := range u.Changes {
		if c.Endpoint.Type != endpoint.TypeTXT {
			key = c.Endpoint.Key()
			break
		}
	}
	by := ""
	if len(u.Resources) > 0 {
		by = " (wanted by " + strings.Join(u.Resources, ", ") + ")"
	}
	c := changes.Conflict{
		Key:    key,
		Reason: fmt.Sprintf("the %d changes of %s were not written%s: %s", len(u.Changes), u.Name, by, reason),
		Advice: "every other name of the zone was written; fix the source object or the record in the zone, and the next sync sends this name again",
	}
	if !until.IsZero() {
		c.Advice = "every other name of the zone was written; this name is sent again after " + until.UTC().Format(time.RFC3339) +
			", or at once when what its object asks for changes: fix the source object or the record in the zone"
	}
	switch {
	case Moved(reason) && until.IsZero():
		c.Advice = "another writer changed these record sets after this sync listed the zone, and nothing of theirs was overwritten; the next sync plans the name again from what it then reads"
	case Moved(reason):
		c.Advice = fmt.Sprintf("Route 53 refused this very change %d times in a row as if another writer had changed the records, though the zone was listed again after each: "+
			"the zone's listing and Route 53 disagree, or a writer is fighting over the name; it is sent again after %s, or at once when the records in the zone or what its object asks for change",
			movedRepeats, until.UTC().Format(time.RFC3339))
	}
	return c
}

// Moved reports whether a refusal says the zone is not as the writer read it: the
// compare-and-swap of a replacement lost a race, rather than the change being invalid.
func Moved(reason string) bool {
	for _, m := range []string{"values provided do not match", "but it was not found", "but it already exists"} {
		if strings.Contains(reason, m) {
			return true
		}
	}
	return false
}

// unitAt returns the index of the unit holding the i-th change of their batch.
func unitAt(units []changes.Unit, i int) int {
	for k, u := range units {
		if i < len(u.Changes) {
			return k
		}
		i -= len(u.Changes)
	}
	return len(units) - 1
}

// named splits units into those whose names a refusal's messages mention and the rest.
// Route 53 quotes names with their trailing dot: "[name='x.', type='A']", "DNS name x.,".
func named(units []changes.Unit, messages []string) (hit, rest []changes.Unit) {
	text := strings.ToLower(strings.Join(messages, "\n"))
	for _, u := range units {
		if mentions(text, u) {
			hit = append(hit, u)
		} else {
			rest = append(rest, u)
		}
	}
	return hit, rest
}

func mentions(text string, u changes.Unit) bool {
	for _, c := range u.Changes {
		names := []string{c.Endpoint.Name + "."}
		if c.Endpoint.IsAlias() && len(c.Endpoint.Targets) == 1 {
			// "Tried to create an alias that targets x., type A in zone Z, but …"
			names = append(names, c.Endpoint.Targets[0]+".")
		}
		for _, n := range names {
			if mentionsName(text, n) || mentionsName(text, strings.ReplaceAll(n, "*", `\052`)) {
				return true
			}
		}
	}
	return false
}

// mentionsName reports whether text quotes the name n (with its trailing dot) whole, not
// as the tail of a longer name.
func mentionsName(text, n string) bool {
	for from := 0; ; {
		i := strings.Index(text[from:], n)
		if i < 0 {
			return false
		}
		i += from
		if i == 0 || strings.ContainsRune("'[ =\"", rune(text[i-1])) {
			return true
		}
		from = i + 1
	}
}

// render fills zr.DryRun with the requests a real sync would send. A provider that
// cannot render fails the zone (provider.ErrNoDryRun) rather than show nothing, which
// would read as "nothing to change".
func (s *Syncer) render(ctx context.Context, zr *ZoneReport) error {
	for i, b := range zr.Changes.Batches {
		doc, err := s.Provider.DryRun(ctx, zr.Zone, b)
		if errors.Is(err, provider.ErrNoDryRun) {
			err = fmt.Errorf("provider %T: %w", s.Provider, err)
		}
		if err != nil {
			return fmt.Errorf("render batch %d of %d: %w", i+1, len(zr.Changes.Batches), err)
		}
		zr.DryRun = append(zr.DryRun, doc)
	}
	return nil
}

// assign puts each desired record into the zones with the longest name that holds it (a
// public and a private zone of one name both get it, as external-dns does). A record
// pinned to one of them (endpoint.PropHostedZoneID, the aws-hosted-zone-id annotation) goes
// into that one alone, without the pin, which no zone stores; pinned to a zone that is not
// among them, it goes nowhere and is listed in unzoned with why, as external-dns v0.23
// skips it with a warning (its changesByZone).
func assign(desired []*endpoint.Endpoint, zones []provider.Zone, filter endpoint.DomainFilter) (map[string][]*endpoint.Endpoint, []string) {
	out := map[string][]*endpoint.Endpoint{}
	var unzoned []string
	for _, d := range desired {
		if !filter.Match(d.Name) {
			continue
		}
		holding := provider.Holding(zones, d.Name)
		if len(holding) == 0 {
			unzoned = append(unzoned, d.Name)
			continue
		}
		if pin, ok := d.Prop(endpoint.PropHostedZoneID); ok {
			holding = slices.DeleteFunc(holding, func(z provider.Zone) bool { return z.ID != pin })
			if len(holding) == 0 {
				unzoned = append(unzoned, d.Name+" (pinned by "+endpoint.PropHostedZoneID+" to hosted zone "+pin+
					", which is not a managed zone of the longest name holding it)")
				continue
			}
			d = d.Clone()
			delete(d.ProviderSpecific, endpoint.PropHostedZoneID)
		}
		for _, z := range holding {
			out[z.ID] = append(out[z.ID], d)
		}
	}
	slices.Sort(unzoned)
	return out, slices.Compact(unzoned)
}

// Summary renders a one-line account of a zone's plan.
func (z ZoneReport) Summary() string {
	if z.Changes == nil {
		return fmt.Sprintf("zone %s: not planned", z.Zone)
	}
	s := z.Changes.Summary
	parts := []string{
		fmt.Sprintf("%d create", s.Create), fmt.Sprintf("%d update", s.Update), fmt.Sprintf("%d delete", s.Delete),
		fmt.Sprintf("%d replace", s.Replace), fmt.Sprintf("%d held by policy", s.Held),
		fmt.Sprintf("%d conflicts", len(z.Changes.Conflicts)), fmt.Sprintf("%d batches", len(z.Changes.Batches)),
	}
	if s.Kept > 0 {
		parts = append(parts, fmt.Sprintf("%d kept", s.Kept))
	}
	if h := z.HeldDeletions; h != nil {
		parts = append(parts, fmt.Sprintf("%d delete held by the deletion guard", len(h.Records)))
	}
	if len(z.Refused) > 0 {
		parts = append(parts, fmt.Sprintf("%d names refused by the provider", len(z.Refused)))
	}
	return fmt.Sprintf("zone %s: %s", z.Zone, strings.Join(parts, ", "))
}

// weightedNames returns the names where owner publishes, or is asked to publish,
// weighted record sets, each with the hold the zone's authority record there says
// (registry.Authority.State), "" when none. current must be labelled with its owners.
func weightedNames(desired, current []*endpoint.Endpoint, owner string) map[string]string {
	var out map[string]string
	add := func(name string) {
		if out == nil {
			out = map[string]string{}
		}
		out[name] = ""
	}
	for _, d := range desired {
		if d.Policy.Kind == endpoint.Weighted {
			add(d.Name)
		}
	}
	for _, c := range current {
		if c.Policy.Kind == endpoint.Weighted && c.Type != endpoint.TypeTXT && c.Owner() == owner {
			add(c.Name)
		}
	}
	if out == nil {
		return nil
	}
	for k, a := range registry.Holds(current) {
		if _, watched := out[k.Name]; watched {
			out[k.Name] = a.State()
		}
	}
	return out
}

// apexNS returns the values of the zone's apex NS record set, as listed.
func apexNS(current []*endpoint.Endpoint, apex string) []string {
	for _, c := range current {
		if c.Type == endpoint.TypeNS && c.Name == apex {
			return slices.Clone(c.Targets)
		}
	}
	return nil
}
