package cutover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Released is what Release did.
type Released struct {
	// Records is the number of authority records deleted (the ALB lever: the number of
	// listener rules whose authority tags were removed).
	Records int
	// TakenOver are the runners whose records were deleted although this journal's
	// runner did not write them (release --force).
	TakenOver []registry.Runner
	// Changes are the weights the publishers write at their next sync, which differ from
	// the zone's: released anyway with force (without it Release refuses them).
	Changes []HandBack
	// Gone are the weighted sets no source asks for any more, which their publishers
	// delete at their next sync: released anyway with force.
	Gone []Departure
	// Unconfirmed are the weighted sets whose publishers had not confirmed the hold:
	// released anyway with force.
	Unconfirmed []Unconfirmed
}

// ReleaseOptions are Release's choices beyond the plan's.
type ReleaseOptions struct {
	// Force releases whatever stands in the way (see Release).
	Force bool
	// Wait is how long to wait for the publishers' confirmations of the hold, and for
	// their sources to ask for the weights the zone holds; 0 refuses at once when either
	// is missing.
	Wait time.Duration
	// Poll is the first interval between two reads of the zone while waiting; it grows
	// by half each time, up to 30 s. 0 means 10 s.
	Poll time.Duration
}

// Release hands the weights back to the publishers: it deletes this cutover's authority
// records, after which a sync writes the weights its sources ask for. It refuses while
// the cutover runs here, and, unless o.Force, when the cutover is unfinished (its weights
// would then have no authority at all), has no journal here, another runner of it
// (another machine) holds its records, or a publisher asks for another weight than the
// zone holds (*ReleaseRefusedError: releasing would change traffic at its next sync).
// With o.Force it deletes them whoever of this cutover's runners wrote them, and says whose
// they were and which weights will change; never another cutover's. Each record is
// deleted exactly as read, and the sets' ownership records, where the publishers record
// what they ask for, are rewritten as read in the same batch: a record rewritten
// meanwhile fails the batch, and the zone is read and judged again.
//
// An ALB or Cloud Map cutover's authority tags are removed by its runner when the cutover
// ends; Release removes those a runner killed before it could (this runner's, the
// journal's token), or with o.Force every runner's of this cutover, never another
// cutover's. The rules (the instances) keep the weights (statuses) written.
//
// Besides a recorded contrary wish, it refuses (*ReleaseRefusedError) unless every owned
// weighted set of the held names confirms the hold: its publisher has synced since the
// hold began and recorded what its source asks for. With o.Wait it waits for all of it,
// reading the zone every 10 to 30 s (saying what it waits for to cfg.Logger): the
// confirmations, and the sources that ask for another weight (or for no member) to ask
// for what the zone holds, as a source fixed and synced meanwhile does; once o.Wait has
// passed it refuses with whatever still stands in the way.
func Release(ctx context.Context, cfg Config, o ReleaseOptions) (Released, error) {
	force := o.Force
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	p := cfg.Plan
	store := cfg.journalStore(p.Name)
	entries, _, err := store.Read()
	exists := !errors.Is(err, os.ErrNotExist)
	switch {
	case err != nil && exists:
		return Released{}, err
	case !exists && !force:
		return Released{}, fmt.Errorf("cutover %s has no journal at %s: it did not run from here (release --force deletes its authority records all the same)", p.Name, store.Where())
	}
	st := replay(entries)
	if st.started && st.done == "" && !force {
		return Released{}, fmt.Errorf("cutover %s is unfinished: finish it (run --resume) or abort it before releasing its weights", p.Name)
	}
	lock, err := store.Acquire(journal.Holder{By: cfg.By, Cutover: p.Name})
	if err != nil {
		return Released{}, err
	}
	defer lock.Release()
	if selects(p) {
		p = clonePlan(p)
	}
	// The lever moves p, the copy the selection is applied to below.
	cfg.Plan = p
	lv, _, err := newLever(cfg)
	if err != nil {
		return Released{}, err
	}
	if selects(p) {
		// The records or rules the cutover selected at start hold its authority records;
		// without a journal (release --force), those the plan selects now.
		if st.selected != nil {
			applySelection(p, *st.selected)
		} else if _, err := selectNow(ctx, lv, p); err != nil {
			return Released{}, err
		}
	}
	res, err := lv.Release(ctx, lever.ReleaseRequest{Token: st.token, Force: force, Wait: o.Wait, Poll: o.Poll, Log: log})
	if err != nil {
		return Released{}, err
	}
	if res.None {
		return Released{}, nil
	}
	rel := Released{Records: res.Records, TakenOver: res.TakenOver, Changes: res.Changes, Gone: res.Gone, Unconfirmed: res.Unconfirmed}
	return rel, journalRelease(store, exists, cfg.By, res.ChangeID, rel)
}

// journalRelease journals what Release did in the cutover's journal, when it has one.
func journalRelease(store journal.Store, exists bool, by, changeID string, rel Released) error {
	if !exists {
		return nil
	}
	j, _, _, err := store.Open()
	if err != nil {
		return err
	}
	defer j.Close()
	e := journal.Entry{Kind: kindReleased, Step: stepNone, ChangeID: changeID, By: by}
	var details []string
	if len(rel.TakenOver) > 0 {
		details = append(details, "taken over from "+formatRunners(rel.TakenOver))
	}
	for _, c := range rel.Changes {
		details = append(details, "forced: "+c.Effect())
	}
	for _, g := range rel.Gone {
		details = append(details, "forced: "+g.Effect())
	}
	for _, u := range rel.Unconfirmed {
		details = append(details, "forced without confirmation: "+u.String())
	}
	e.Detail = strings.Join(details, "; ")
	_, err = j.Append(e)
	return err
}
