package route53

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/provider"
)

// casWrite is the compare-and-swap write of one change batch, the one loop of the lever
// of one zone (dnsLever.Write) and of each unit of the fleet's (fleetLever.writeUnit):
// the batch built on a read, sent, and
//   - landed with its change id lost: built again from a fresh read (the weights already
//     stand, so it is the authority records' alone) to have a change to follow to INSYNC;
//     Route 53 applies a zone's changes in order, so its INSYNC covers the lost one;
//   - refused (*provider.RejectedError): after lever.Backoff, read again; a read that
//     refuses the cutover, or drift, stops the write; otherwise built again from the read
//     if something it read moved, up to lever.CASAttempts times, then it fails naming what
//     moved; refused although nothing moved, it fails at once;
//   - failed otherwise: it fails.
//
// What differs between the two levers is set by each.
type casWrite struct {
	dns DNS
	c   lever.Change
	// what names the write in logs ("step"), comment to Route 53 (the change's comment).
	what, comment string
	log           *slog.Logger
	// prefix heads the errors the write makes of others: what, and for a fleet's unit the
	// zone ("step 2 of 4: zone a.example.com").
	prefix string
	// lostMsg is the warning logged when a batch landed and its change id was lost.
	lostMsg string
	// beforeSend, when set, is called with the live each attempt is built on, before it is
	// sent; its error stops the write as it is. The fleet calls the runner's BeforeSend
	// itself: before the units are sent, and in reread.
	beforeSend func(l *live) error
	// reread reads the batch's records again: after its change id was lost (refused
	// false) or after a refusal (true). Its error stops the write, headed by prefix.
	reread func(ctx context.Context, refused bool) (*live, error)
	// drift, when set, is the drift a read after a refusal shows (nil when none): it stops
	// the write as it is. The fleet checks drift in reread instead.
	drift func(fresh *live) error
}

// send writes the batch built on l until it lands, and returns the live it was built on at
// last, the batch and its change id ("" when the last attempt's was lost too).
func (w *casWrite) send(ctx context.Context, l *live) (*live, changes.Batch, string, error) {
	desc := "write"
	if len(w.c.Weights) > 0 {
		desc += " " + lever.FormatWeights(w.c.Weights)
	}
	for attempt := 1; ; attempt++ {
		batch := l.batch(w.c.Weights, w.c.TTLs)
		if w.beforeSend != nil {
			if err := w.beforeSend(l); err != nil {
				return nil, nil, "", err
			}
		}
		id, err := w.dns.ApplyChange(ctx, l.zone, batch, w.comment)
		if err == nil && id == "" && len(batch) > 0 && attempt < lever.CASAttempts {
			// The batch landed but its answer was lost, and with it the change id to
			// follow to INSYNC. Write again from a fresh read: the weights already stand,
			// so the batch is the authority records' alone, and Route 53 applies a zone's
			// changes in order, so its INSYNC covers the lost one.
			w.log.Warn(w.lostMsg, "zone", l.zone.Name, "step", w.what, "attempt", attempt)
			fresh, rerr := w.reread(ctx, false)
			if rerr != nil {
				return nil, nil, "", fmt.Errorf("%s: %w", w.prefix, rerr)
			}
			l = fresh
			continue
		}
		if err == nil {
			return l, batch, id, nil
		}
		var rej *provider.RejectedError
		if !errors.As(err, &rej) {
			return nil, nil, "", fmt.Errorf("%s: %s: %w", w.prefix, desc, err)
		}
		// Read again after the pause, not before it: the next batch is built on the read.
		if err := lever.Backoff(ctx, attempt); err != nil {
			return nil, nil, "", err
		}
		fresh, rerr := w.reread(ctx, true)
		if rerr != nil {
			w.log.Warn("write refused; the zone read again refuses the cutover", "zone", l.zone.Name, "step", w.what, "refusal", err)
			return nil, nil, "", fmt.Errorf("%s: %w", w.prefix, rerr)
		}
		if w.drift != nil {
			if d := w.drift(fresh); d != nil {
				// A weight moved between the read and the write: the compare-and-swap
				// kept it from being overwritten unseen.
				return nil, nil, "", d
			}
		}
		moved := l.moved(fresh)
		switch {
		case len(moved) == 0:
			return nil, nil, "", fmt.Errorf("%s: %s: refused, though nothing it read has changed since: %w", w.prefix, desc, err)
		case attempt == lever.CASAttempts:
			return nil, nil, "", fmt.Errorf("%s: %s: the zone changed under the cutover before each of %d attempts landed (a publisher writing the same record sets?); last: %s: %w",
				w.prefix, desc, lever.CASAttempts, strings.Join(moved, "; "), err)
		}
		w.log.Warn("the zone changed under the write: writing again from a fresh read", "zone", l.zone.Name, "step", w.what, "attempt", attempt, "moved", moved)
		l = fresh
	}
}
