package controller

import (
	"context"

	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/metrics"
)

// syncGuarded syncs through the deletion guard. A controller's --allow-mass-delete
// (Syncer.Guard.Allow) is not sync's: a controller runs for weeks, restarts, fails over,
// and a flag left in its Deployment must not let through a mass deletion nobody has
// looked at. So it becomes AllowRemembered for the first reconcile after start: only the
// deletions the guard held before (the ones a person was told about, in an event and the
// zone's marker) go, and only then; from the first reconcile that lists and writes every
// zone with every object read, the guard is whole again, and the log says so.
func (c *Controller) syncGuarded(ctx context.Context, eps []*endpoint.Endpoint, keep Keep) (*Report, error) {
	s := c.cfg.Syncer
	if s.Guard.Allow {
		s.Guard.Allow, s.Guard.AllowRemembered = false, true
	}
	rep, err := s.SyncKeeping(ctx, eps, keep)
	if s.Guard.AllowRemembered && err == nil && rep.Err() == nil && !keep.All {
		s.Guard.AllowRemembered = false
		c.log.Warn("deletion guard: --allow-mass-delete let through, at the first reconcile, the deletions the guard had held before; the guard is whole again for every later reconcile",
			"owner", s.Registry.OwnerID())
	}
	return rep, err
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
		if z.Changes == nil {
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
			c.cfg.Events.WarnControllerAbout(ReasonDeletionsHeld, z.Zone.ID, h.Message(z.Zone.Name))
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
