package controller

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/endpoint"
)

// DefaultMaxDeleteRatio is the share of an owner's records in a zone that one sync may
// delete before the deletion guard holds its deletions (with DefaultMaxDeleteMin).
const DefaultMaxDeleteRatio = 0.5

// DefaultMaxDeleteMin is the fewest deletions the ratio rule holds: fewer always go,
// unless they are all of the owner's records in the zone.
const DefaultMaxDeleteMin = 10

// DeleteGuard holds back mass deletions: an input that reads as empty (an empty manifest
// directory, a changed annotation prefix, a wrong label filter) must not delete what an
// owner published (safety rule "never destroy"). The zero value is the guard on, with
// the default limits.
type DeleteGuard struct {
	// MaxRatio is the share of an owner's records in a zone above which deletions are
	// held (when there are at least Min of them); 0 means DefaultMaxDeleteRatio.
	MaxRatio float64
	// Min is the fewest deletions the ratio rule holds; 0 means DefaultMaxDeleteMin.
	Min int
	// Allow lets held deletions through (sync --allow-mass-delete).
	Allow bool
	// AllowRemembered lets through only the deletions of zones where the guard already
	// held this owner's deletions at an earlier run (the zone's marker names the owner):
	// what a controller restarted with --allow-mass-delete lets through, at its first
	// reconcile. A mass deletion nobody has been told about yet is held whatever it says.
	AllowRemembered bool
}

// limits returns the guard's ratio and minimum, defaults applied.
func (g DeleteGuard) limits() (float64, int) {
	ratio, lo := g.MaxRatio, g.Min
	if ratio <= 0 {
		ratio = DefaultMaxDeleteRatio
	}
	if lo <= 0 {
		lo = DefaultMaxDeleteMin
	}
	return ratio, lo
}

// trips reports whether deleting deletes of the owned records an owner holds in a zone
// is a mass deletion, whatever Allow says: all of them, or more than the ratio and at
// least the minimum. A count of deletions above the records counted as owned (which
// cannot happen with a consistent count) is taken as all of them.
func (g DeleteGuard) trips(owned, deletes int) bool {
	if deletes <= 0 {
		return false
	}
	if deletes >= owned {
		return true
	}
	ratio, lo := g.limits()
	return deletes >= lo && float64(deletes) > ratio*float64(owned)
}

// Holds reports whether the guard holds back deleting deletes of the owned records an
// owner holds in a zone.
func (g DeleteGuard) Holds(owned, deletes int) bool {
	return !g.Allow && g.trips(owned, deletes)
}

// HeldDeletions are the deletions the guard held in one zone: creates and updates were
// written, these records (and their ownership records) were not deleted.
type HeldDeletions struct {
	// Owner is the owner whose records were held.
	Owner string
	// Owned counts the records (not ownership TXT) of a managed type and name this owner
	// held in the zone before the sync.
	Owned int
	// Deletes counts the record deletions the plan wanted (pure deletes; a routing-policy
	// Replace is not one).
	Deletes int
	// Records are the records held, sorted.
	Records []endpoint.Key
	// MaxRatio and Min are the limits the guard applied (defaults filled in), for the
	// message.
	MaxRatio float64
	Min      int
	// Since is true when Owned is the count the guard recorded when it first held this
	// owner's deletions in the zone (its marker record), not the count now: see
	// Syncer.guard.
	Since bool
	// DryRun is true when the sync sent nothing: the message then says what a real sync
	// would hold and write, not what was.
	DryRun bool
}

// Message says, in one sentence, what was held in zone, the limit, and the way through.
func (h *HeldDeletions) Message(zone string) string {
	// One wording for the first hold and the later ones (Since): a controller reports
	// a hold once, as long as its message stands.
	owns := "owned there before the guard first held them (a count the zone keeps in a " + markerPrefix + " TXT record until a sync holds nothing)"
	held, stay := "held", "those records stay, creates and updates were written"
	if h.DryRun {
		held, stay = "would hold", "those records would stay, creates and updates would be written"
	}
	return fmt.Sprintf("zone %s: the deletion guard %s %d %s of the %d %s owner %s %s (it holds deleting all of them, or more than %s and at least %d): "+
		"%s; if the sources are right, pass --allow-mass-delete (sync: run again with it; controller: restart with it, and its first reconcile lets through what was held)",
		zone, held, h.Deletes, plural(h.Deletes, "deletion", "deletions"), h.Owned, plural(h.Owned, "record", "records"), h.Owner, owns, percent(h.MaxRatio), h.Min, stay)
}

// percent renders a ratio as a percentage: 0.5 is "50%".
func percent(r float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", r*100), "0"), ".") + "%"
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// DeletionsHeld returns how many record deletions the guard held, across zones.
func (r *Report) DeletionsHeld() int {
	n := 0
	for _, z := range r.Zones {
		if z.HeldDeletions != nil {
			n += z.HeldDeletions.Deletes
		}
	}
	return n
}

// keptAllReason is the planner's reason for a record Input.KeepAll keeps (plan.planner.kept):
// when the guard re-plans a zone with KeepAll, what it keeps is held by the guard, not
// kept because input was unreadable, and is reported so.
const keptAllReason = "some input could not be read, so no record is deleted in this run"

// guardReason replaces keptAllReason in the plans the guard made.
const guardReason = "the deletion guard holds this zone's deletions in this run (--allow-mass-delete lets them through)"

// guard holds the zone's deletions when they are a mass deletion: the zone is planned
// again keeping every owned record the plan would delete (the planner's KeepAll, so the
// creates and updates are the planner's own and no ownership record of a kept record
// goes), and the records held are reported in zr.HeldDeletions. in is the input zr.Plan
// was calculated from; current has been labelled with owners by that calculation.
//
// A hold is remembered in the zone itself, in a marker TXT record (MarkerName) holding the
// owner's record count from before the first hold: until a sync of the owner holds nothing,
// the guard counts against that number, not today's. Otherwise the creates a held sync
// wrote would dilute the count: 20 records held as all of them, beside the 20 a wrong
// --namespace created, are 20 of 40 at the next run (of sync, or of a restarted
// controller), not more than half, and would go.
func (s *Syncer) guard(ctx context.Context, zr *ZoneReport, in changes.Input, current []*endpoint.Endpoint, log *slog.Logger) {
	if in.KeepAll {
		return // nothing is deleted anyway, and nothing is known of what would be
	}
	deletes := zr.Changes.Summary.Delete
	deleted := map[endpoint.Key]bool{}
	for _, b := range zr.Changes.Batches {
		for _, c := range b {
			if c.Action == changes.Delete && c.Endpoint.Type != endpoint.TypeTXT {
				deleted[c.Endpoint.Key()] = true
			}
		}
	}
	owner := s.Registry.OwnerID()
	owned := ownedRecords(current, owner, s.ManagedTypes, s.DomainFilter)
	mark, baselines := readMarker(current, zr.Zone.Name)
	base, since := baselines[owner]
	if since {
		owned = base
	}
	ratio, lo := s.Guard.limits()
	allowed := s.Guard.Allow || (s.Guard.AllowRemembered && since)
	if deletes == 0 || !s.Guard.trips(owned, deletes) || allowed {
		if deletes > 0 && allowed && s.Guard.trips(owned, deletes) {
			log.WarnContext(ctx, "mass deletion allowed by --allow-mass-delete", "zone", zr.Zone.Name, "zone_id", zr.Zone.ID, "owner", owner, "owned", owned, "deletes", deletes)
		}
		if since {
			// Nothing held now: the hold is over, its marker goes.
			addMarkerUnit(zr.Changes, mark, zr.Zone.Name, owner, -1)
		}
		return
	}
	orig := zr.Changes
	in.KeepAll = true
	re := changes.Calculate(in)

	wasKept := map[endpoint.Key]bool{}
	for _, k := range orig.Kept {
		wasKept[k.Key] = true
	}
	h := &HeldDeletions{Owner: owner, Owned: owned, Deletes: deletes, MaxRatio: ratio, Min: lo, Since: since, DryRun: s.DryRun}
	kept := re.Kept[:0]
	for _, k := range re.Kept {
		switch {
		case wasKept[k.Key]:
			kept = append(kept, k)
		case deleted[k.Key]:
			// A pure deletion of the first plan: the guard's to report.
			h.Records = append(h.Records, k.Key)
			re.Summary.Kept--
		default:
			// Kept by KeepAll though the first plan did not delete it (a weighted member
			// a cutover holds): kept for the guard's sake.
			k.Reason = strings.ReplaceAll(k.Reason, keptAllReason, guardReason)
			k.Advice = "run again with --allow-mass-delete if the sources are right"
			kept = append(kept, k)
		}
	}
	re.Kept = kept
	// A record set that a wanted one must replace under another key (a routing-policy
	// transition, a CNAME over an A) is kept too, and the replacement reported as a
	// conflict: in a zone whose input looks wrong, no owned record goes.
	for i := range re.Conflicts {
		re.Conflicts[i].Reason = strings.ReplaceAll(re.Conflicts[i].Reason, keptAllReason, guardReason)
	}
	slices.SortFunc(h.Records, func(a, b endpoint.Key) int {
		return cmpKeys(a, b)
	})
	if !since {
		addMarkerUnit(re, mark, zr.Zone.Name, owner, owned)
	}
	zr.Changes, zr.HeldDeletions = re, h
	level := slog.LevelWarn
	if s.QuietConflicts {
		level = slog.LevelDebug // a controller reports it once, as an event on its Pod
	}
	log.Log(ctx, level, "deletion guard held deletions", "zone", zr.Zone.Name, "zone_id", zr.Zone.ID, "owner", owner,
		"owned", owned, "since_first_hold", since, "deletes", deletes, "held", len(h.Records), "max_ratio", ratio, "min", lo)
}

func cmpKeys(a, b endpoint.Key) int {
	switch {
	case a.Name != b.Name:
		return strings.Compare(a.Name, b.Name)
	case a.Type != b.Type:
		return strings.Compare(a.Type, b.Type)
	}
	return strings.Compare(a.SetIdentifier, b.SetIdentifier)
}

// ownedRecords counts the records (not ownership TXT records) of owner in current that a
// sync with these types and filter plans, and so could delete. current must be labelled
// with its owners.
func ownedRecords(current []*endpoint.Endpoint, owner string, types []string, filter endpoint.DomainFilter) int {
	if types == nil {
		types = changes.DefaultManagedTypes
	}
	filtered := len(filter.Include)+len(filter.Exclude) > 0
	n := 0
	for _, c := range current {
		if c.Type != endpoint.TypeTXT && c.Owner() == owner && slices.Contains(types, c.Type) && (!filtered || filter.Match(c.Name)) {
			n++
		}
	}
	return n
}

// MarkerName is the name of the TXT record in which the deletion guard remembers, per
// owner, the record count from before it first held that owner's deletions in zone.
func MarkerName(zone string) string { return "_crossfade-deletion-guard." + zone }

// markerPrefix starts each owner's value in the marker record.
const markerPrefix = "crossfade-deletion-guard"

// readMarker returns the zone's marker record set as listed (nil when none) and the count
// it holds for each owner.
func readMarker(current []*endpoint.Endpoint, zone string) (*endpoint.Endpoint, map[string]int) {
	name := MarkerName(zone)
	for _, c := range current {
		if c.Name != name || c.Type != endpoint.TypeTXT || c.SetIdentifier != "" {
			continue
		}
		counts := map[string]int{}
		for _, t := range c.Targets {
			if owner, n, ok := parseMarkerValue(t); ok {
				counts[owner] = n
			}
		}
		return c, counts
	}
	return nil, nil
}

// markerValue is owner's value in the marker: `"crossfade-deletion-guard owner=blue owned=20"`.
func markerValue(owner string, owned int) string {
	return fmt.Sprintf("%q", fmt.Sprintf("%s owner=%s owned=%d", markerPrefix, owner, owned))
}

// parseMarkerValue reads one value of the marker; ok is false for a value it did not write.
func parseMarkerValue(v string) (owner string, owned int, ok bool) {
	f := strings.Fields(strings.Trim(v, `"`))
	if len(f) != 3 || f[0] != markerPrefix || !strings.HasPrefix(f[1], "owner=") || !strings.HasPrefix(f[2], "owned=") {
		return "", 0, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(f[2], "owned="))
	if err != nil || n < 0 {
		return "", 0, false
	}
	return strings.TrimPrefix(f[1], "owner="), n, true
}

// addMarkerUnit appends to p a batch that sets owner's value in the zone's marker to owned,
// or removes it when owned < 0: the set as listed is deleted and the new one created (the
// compare-and-swap every crossfade write is; no UPSERT), other owners' values kept.
func addMarkerUnit(p *changes.Set, mark *endpoint.Endpoint, zone, owner string, owned int) {
	var values []string
	if mark != nil {
		for _, t := range mark.Targets {
			if o, _, ok := parseMarkerValue(t); !ok || o != owner {
				values = append(values, t)
			}
		}
	}
	if owned >= 0 {
		values = append(values, markerValue(owner, owned))
	}
	u := changes.Unit{Name: MarkerName(zone)}
	if mark != nil {
		u.Changes = append(u.Changes, changes.Change{Action: changes.Delete, Endpoint: mark})
	}
	if len(values) > 0 {
		u.Changes = append(u.Changes, changes.Change{Action: changes.Create, Endpoint: &endpoint.Endpoint{
			Name: MarkerName(zone), Type: endpoint.TypeTXT, Targets: endpoint.NewTargets(values...), TTL: endpoint.NewTTL(300)}})
	}
	if len(u.Changes) == 0 {
		return
	}
	p.Units = append(p.Units, []changes.Unit{u})
	p.Batches = append(p.Batches, changes.Changes([]changes.Unit{u}))
}
