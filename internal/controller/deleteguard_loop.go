package controller

import (
	"context"
	"fmt"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/metrics"
	"github.com/crossfade-io/crossfade/internal/plan"
)

// syncGuarded syncs through the deletion guard. A controller's Syncer.Guard.Allow
// (--allow-mass-delete) lets held deletions through once, not at every reconcile: a
// controller runs for weeks, and a flag left in its Deployment must not disarm the guard
// for good. So every sync runs with the guard on; the first one that holds deletions
// while the allowance stands is run again with the guard off, which deletes what was held,
// and the allowance is spent: the guard is on from then on, and the log says so. A
// sync that holds nothing leaves the allowance for a later one.
//
// The report returned is the last sync's, with the first's writes counted in each
// zone's Written.
func (c *Controller) syncGuarded(ctx context.Context, eps []*endpoint.Endpoint, keep Keep) (*Report, error) {
	s := c.cfg.Syncer
	if !s.Guard.Allow {
		return s.SyncKeeping(ctx, eps, keep)
	}
	s.Guard.Allow = false
	rep, err := s.SyncKeeping(ctx, eps, keep)
	// A reconcile that failed somewhere keeps the allowance too: planning again at once
	// would list the failing zone a second time (the reconcile backoff's one listing).
	if err != nil || rep == nil || rep.DeletionsHeld() == 0 || rep.Err() != nil {
		s.Guard.Allow = true // not used yet: kept for the first sync that holds deletions
		return rep, err
	}
	held := rep.DeletionsHeld()
	s.Guard.Allow = true
	again, err := s.SyncKeeping(ctx, eps, keep)
	if err != nil {
		// Nothing was planned again, so nothing held was deleted: the allowance stands.
		return rep, fmt.Errorf("deleting the %d held records (--allow-mass-delete): %w", held, err)
	}
	s.Guard.Allow = false
	c.log.Warn("deletion guard: --allow-mass-delete let the held deletions through once; the guard is on again for every later reconcile",
		"held", held, "owner", s.Registry.OwnerID())
	first := map[string]map[plan.Action]int{}
	for _, z := range rep.Zones {
		first[z.Zone.ID] = z.Written
	}
	for i := range again.Zones {
		z := &again.Zones[i]
		if len(first[z.Zone.ID]) == 0 {
			continue
		}
		w := make(map[plan.Action]int, len(z.Written)+len(first[z.Zone.ID]))
		for _, m := range []map[plan.Action]int{z.Written, first[z.Zone.ID]} {
			for a, n := range m {
				w[a] += n
			}
		}
		z.Written = w
	}
	return again, nil
}

// reportHeld reports each planned zone's held deletions as a Warning event on the
// controller's Pod (one per zone and message, again after the reporter's Reemit; without
// an EventReporter, the Syncer's log line at every sync is all). A planned zone that
// holds none ends its problem. It returns the held deletions by zone name, for every zone
// planned (0 included): a zone that could not be listed says nothing of its held
// deletions and is left out.
func (c *Controller) reportHeld(rep *Report) map[string]int {
	held := map[string]int{}
	if rep == nil {
		return held
	}
	for _, z := range rep.Zones {
		if z.Plan == nil {
			continue
		}
		h := z.HeldDeletions
		held[z.Zone.Name] += 0 // planned: its count is known, even at 0
		if h == nil {
			if c.cfg.Events != nil {
				c.cfg.Events.ResolveController(ReasonDeletionsHeld, z.Zone.ID)
			}
			continue
		}
		held[z.Zone.Name] += h.Deletes
		if c.cfg.Events != nil {
			// Without the "held at an earlier reconcile" clause, which the second reconcile
			// of a hold adds: the problem is the same one, and its event is not sent again.
			ev := *h
			ev.Earlier = 0
			c.cfg.Events.WarnControllerAbout(ReasonDeletionsHeld, z.Zone.ID, ev.Message(z.Zone.Name))
		}
	}
	return held
}

// RecordHeld puts s's held deletions into d (crossfade_deletions_held): the zones
// planned this time get their count, the other zones reconciled keep theirs, and the
// zones no longer reconciled lose their series.
func (s Stats) RecordHeld(d *metrics.DeletionsHeld) {
	names := make([]string, 0, len(s.ZoneNames))
	for _, n := range s.ZoneNames {
		names = append(names, n)
	}
	d.Set(names, s.DeletionsHeld)
}
