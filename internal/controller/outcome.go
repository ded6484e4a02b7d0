package controller

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/crossfade-io/crossfade/internal/atomicfile"
	"github.com/crossfade-io/crossfade/internal/source"
)

// Keep returns what the sync must keep for this outcome's input: the records of every
// object that is invalid now, and every owned record when some input was unreadable.
func (o *Outcome) Keep() Keep {
	return Keep{Resources: o.Source.Held, All: len(o.InputErrors) > 0}
}

// Outcome is one reconcile from objects to zones: what could not be read, what the
// sources made of the rest, and what the sync did with it.
type Outcome struct {
	// InputErrors are objects that could not be read at all, e.g. malformed manifests.
	InputErrors []error
	// Source is what the sources made of the objects read.
	Source source.Result
	// Report is what the sync did, or would do, per zone; nil when it did not run.
	Report *Report
	// DryRun is true when nothing was sent.
	DryRun bool

	// saved maps a zone id to the files SaveBatches wrote its dry-run batches to.
	saved map[string][]string
}

// SaveBatches writes each zone's dry-run batches to dir as <zone id>-<n>.json, ready for
// `aws route53 change-resource-record-sets --change-batch file://…`; WriteText then names
// the files instead of printing the JSON.
func (o *Outcome) SaveBatches(dir string) error {
	if o.Report == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save batches: %w", err)
	}
	o.saved = map[string][]string{}
	for _, z := range o.Report.Zones {
		for i, doc := range z.DryRun {
			name := fmt.Sprintf("%s-%d.json", z.Zone.ID, i+1)
			p := filepath.Join(dir, name)
			// Written aside and renamed: a reader (aws route53 … file://) sees the old
			// batch or the whole new one, never a half-written one; the temporary name
			// starts with a dot and does not end in .json, so no glob takes it.
			if err := atomicfile.WriteFile(filepath.Join(dir, "."+name+".tmp"), p, append(doc, '\n'), 0o644); err != nil {
				return fmt.Errorf("save batches: zone %s: %w", z.Zone, err)
			}
			o.saved[z.Zone.ID] = append(o.saved[z.Zone.ID], p)
		}
	}
	return nil
}

// Findings counts what a strict run refuses: unreadable and invalid objects, conflicts
// (refusals by the provider included), records written otherwise than asked, and names
// no managed zone holds. Pending objects (no load balancer address yet) and
// objects skipped on purpose are not findings.
func (o *Outcome) Findings() int {
	n := len(o.InputErrors) + len(o.Source.Invalid)
	if o.Report != nil {
		n += len(o.Report.Conflicts()) + len(o.Report.Notes()) + len(o.Report.Unzoned)
	}
	return n
}

// WriteText writes the outcome for people: one line per zone, then every object or
// record that was not published, each with why; in a dry run, each batch as it would be
// sent.
func (o *Outcome) WriteText(w io.Writer) error {
	b := bufio.NewWriter(w)
	res := o.Source
	fmt.Fprintf(b, "sources: %d records; %d invalid, %d pending, %d skipped objects", len(res.Endpoints), len(res.Invalid), len(res.Pending), len(res.Skipped))
	if len(o.InputErrors) > 0 {
		fmt.Fprintf(b, "; %d unreadable", len(o.InputErrors))
	}
	fmt.Fprintln(b)
	if r := o.Report; r != nil {
		for _, z := range r.Zones {
			fmt.Fprintln(b, z.Summary())
			if z.Err != nil {
				fmt.Fprintf(b, "  error: %v\n", z.Err)
			}
			for i, doc := range z.DryRun {
				cli := "aws route53 change-resource-record-sets --hosted-zone-id " + z.Zone.ID + " --change-batch file://"
				if files := o.saved[z.Zone.ID]; i < len(files) {
					fmt.Fprintf(b, "  batch %d of %d: %s%s\n", i+1, len(z.DryRun), cli, files[i])
					continue
				}
				fmt.Fprintf(b, "  batch %d of %d, as `%sBATCH.json` takes it:\n%s\n", i+1, len(z.DryRun), cli, doc)
			}
		}
	}
	section(b, "unreadable (skipped; everything else was read)", o.InputErrors)
	section(b, "invalid (skipped, and what they published is kept; everything else is synced)", res.Invalid)
	section(b, "pending (not published yet)", res.Pending)
	section(b, "skipped", res.Skipped)
	if r := o.Report; r != nil {
		writeHeld(b, r)
		section(b, "conflicts (not written; nothing was deleted)", r.Conflicts())
		section(b, "written otherwise than asked", r.Notes())
		section(b, "kept (no source wants them now, but they were not deleted)", r.Kept())
		if r.KeptAll {
			fmt.Fprintln(b, "some input could not be read: no record was deleted in this run")
		}
		section(b, "no managed zone holds these names", r.Unzoned)
	}
	if o.DryRun {
		fmt.Fprintln(b, "dry run: nothing was sent")
	}
	return b.Flush()
}

// heldShown is how many held records WriteText names per zone.
const heldShown = 20

// writeHeld writes, for each zone where the deletion guard held deletions, what it held,
// why, and the way through: the first heldShown records, then how many more.
func writeHeld(w io.Writer, r *Report) {
	n := r.DeletionsHeld()
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "held by the deletion guard (not deleted): %d\n", n)
	for _, z := range r.Zones {
		h := z.HeldDeletions
		if h == nil {
			continue
		}
		fmt.Fprintf(w, "  %s\n", h.Message(z.Zone.String()))
		for i, k := range h.Records {
			if i == heldShown {
				fmt.Fprintf(w, "    … and %d more\n", len(h.Records)-heldShown)
				break
			}
			fmt.Fprintf(w, "    %s\n", k)
		}
	}
}

// section writes a titled list of items, nothing when there are none.
func section[T any](w io.Writer, title string, items []T) {
	if len(items) == 0 {
		return
	}
	fmt.Fprintf(w, "%s: %d\n", title, len(items))
	for _, it := range items {
		fmt.Fprintf(w, "  %v\n", it)
	}
}
