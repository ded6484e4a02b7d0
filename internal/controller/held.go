package controller

import (
	"fmt"
	"strings"
)

// HeldError fails a one-shot run (crossfade sync) in which the deletion guard held
// deletions, naming each zone, its counts and the way through; nil when it held none.
// dryRun words it as what a sync would do.
func (r *Report) HeldError(dryRun bool) error {
	n := r.DeletionsHeld()
	if n == 0 {
		return nil
	}
	var zones []string
	for _, z := range r.Zones {
		if h := z.HeldDeletions; h != nil {
			zones = append(zones, fmt.Sprintf("zone %s: %d of the %d records of owner %s", z.Zone, h.Deletes, h.Owned, h.Owner))
		}
	}
	verb, outcome := "held", "nothing was deleted there, creates and updates went on"
	if dryRun {
		verb, outcome = "would hold", "a sync would delete nothing there, and write the creates and updates"
	}
	return fmt.Errorf("the deletion guard %s %d %s (%s): %s; "+
		"if the sources are right, run again with --allow-mass-delete", verb, n, plural(n, "deletion", "deletions"), strings.Join(zones, "; "), outcome)
}
