package controller

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
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
	// Allow lets held deletions through (--allow-mass-delete).
	Allow bool
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
	// Earlier counts the records held because an earlier sync of this Syncer held them
	// (a controller's previous reconcile), whatever the counts say now: see Syncer.guard.
	Earlier int
}

// Message says, in one sentence, what was held in zone, the limit, and the way through.
func (h *HeldDeletions) Message(zone string) string {
	still := ""
	if h.Earlier > 0 {
		still = fmt.Sprintf("; %d of them %s held at an earlier reconcile and stay held until a source wants them again", h.Earlier, plural(h.Earlier, "was", "were"))
	}
	return fmt.Sprintf("zone %s: the deletion guard held %d %s of the %d %s owner %s owns there (it holds deleting all of them, or more than %s and at least %d%s): "+
		"those records stay, creates and updates were written; if the sources are right, pass --allow-mass-delete (sync: run again with it; controller: restart with it, it lets them through once)",
		zone, h.Deletes, plural(h.Deletes, "deletion", "deletions"), h.Owned, plural(h.Owned, "record", "records"), h.Owner, percent(h.MaxRatio), h.Min, still)
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
// A hold is remembered for the zone: a later sync by the same Syncer (a controller's next
// reconcile) holds again while it would still delete any record held before, whatever the
// counts say then. Otherwise the creates a held sync wrote would dilute the count: an
// owner's 5 records held as "all of them" beside 1 record a wrong filter created would be
// 5 of 6 at the next reconcile, under the minimum, and go.
func (s *Syncer) guard(ctx context.Context, zr *ZoneReport, in plan.Input, current []*endpoint.Endpoint, log *slog.Logger) {
	if in.KeepAll {
		return // nothing is deleted anyway, and nothing is known of what would be
	}
	deletes := zr.Plan.Summary.Delete
	deleted := map[endpoint.Key]bool{}
	for _, b := range zr.Plan.Batches {
		for _, c := range b {
			if c.Action == plan.Delete && c.Endpoint.Type != endpoint.TypeTXT {
				deleted[c.Endpoint.Key()] = true
			}
		}
	}
	earlier := 0
	for k := range s.held[zr.Zone.ID] {
		if deleted[k] {
			earlier++
		}
	}
	owner := s.Registry.OwnerID()
	owned := ownedRecords(current, owner, s.ManagedTypes, s.DomainFilter)
	ratio, lo := s.Guard.limits()
	if deletes == 0 || (earlier == 0 && !s.Guard.trips(owned, deletes)) {
		delete(s.held, zr.Zone.ID)
		return
	}
	if s.Guard.Allow {
		delete(s.held, zr.Zone.ID)
		log.WarnContext(ctx, "mass deletion allowed by --allow-mass-delete", "zone", zr.Zone.Name, "zone_id", zr.Zone.ID, "owner", owner, "owned", owned, "deletes", deletes)
		return
	}
	orig := zr.Plan
	in.KeepAll = true
	re := plan.Calculate(in)

	wasKept := map[endpoint.Key]bool{}
	for _, k := range orig.Kept {
		wasKept[k.Key] = true
	}
	h := &HeldDeletions{Owner: owner, Owned: owned, Deletes: deletes, MaxRatio: ratio, Min: lo, Earlier: earlier}
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
	zr.Plan, zr.HeldDeletions = re, h
	if s.held == nil {
		s.held = map[string]map[endpoint.Key]bool{}
	}
	s.held[zr.Zone.ID] = make(map[endpoint.Key]bool, len(h.Records))
	for _, k := range h.Records {
		s.held[zr.Zone.ID][k] = true
	}
	level := slog.LevelWarn
	if s.QuietConflicts {
		level = slog.LevelDebug // a controller reports it once, as an event on its Pod
	}
	log.Log(ctx, level, "deletion guard held deletions", "zone", zr.Zone.Name, "zone_id", zr.Zone.ID, "owner", owner,
		"owned", owned, "deletes", deletes, "held", len(h.Records), "earlier", earlier, "max_ratio", ratio, "min", lo)
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
		types = plan.DefaultManagedTypes
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
