package route53

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/provider"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Default and longest intervals between two reads of the zone while release waits for
// the publishers: each read lists the zone, one Route 53 call of its 5 a second.
const (
	defaultReleasePoll = 10 * time.Second
	maxReleasePoll     = 30 * time.Second
)

// Release deletes the cutover's authority records (r.Token's; with r.Force every
// runner's of this cutover), after which a sync writes the weights the sources ask for
// (see cutover.Release for when it refuses, with *lever.ReleaseRefusedError, and waits).
// Each record is deleted exactly as read, and the sets' ownership records are rewritten
// as read in the same batch: a record rewritten meanwhile fails the batch, and the zone is
// read and judged again.
func (d *dnsLever) Release(ctx context.Context, r lever.ReleaseRequest) (lever.ReleaseResult, error) {
	return release(ctx, d.p, d.dns, r, func(ctx context.Context, ro lever.ReadOptions) (*live, []*live, error) {
		l, err := readLive(ctx, d.dns, d.reg, d.p, ro)
		if err != nil {
			return nil, nil, err
		}
		return l, []*live{l}, nil
	})
}

// release is Release of the sets read reads: all of them as one (their union), and the
// zones' apart. Each zone's authority records are deleted by one batch of that zone, the
// zones in parallel; a zone whose batch is refused (rewritten since the read) has the
// whole release read and judged again, and a zone already released has nothing left to
// delete then.
func release(ctx context.Context, p *spec.Plan, dns DNS, r lever.ReleaseRequest, read func(ctx context.Context, ro lever.ReadOptions) (*live, []*live, error)) (lever.ReleaseResult, error) {
	force, log := r.Force, r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	poll := cmp.Or(r.Poll, defaultReleasePoll)
	start := time.Now()
	ro := lever.ReadOptions{Partial: true, Runner: registry.Runner{Token: r.Token}, Takeover: force}
	// released counts the records, and ids the changes, of zones released by an attempt
	// whose other zones' batches were refused.
	var released int
	var ids []string
	// fail returns err, saying first what an earlier attempt released: those zones'
	// weights are the publishers' again whatever stops the release now, and whoever reads
	// the error must know it.
	fail := func(err error) (lever.ReleaseResult, error) {
		if len(ids) == 0 {
			return lever.ReleaseResult{}, err
		}
		return lever.ReleaseResult{}, fmt.Errorf("release: %d authority records released (changes %s), the others not: %w", released, strings.Join(ids, " "), err)
	}
	for attempt := 1; ; attempt++ {
		l, parts, err := read(ctx, ro)
		if err != nil {
			return fail(err)
		}
		records := heldIn(l)
		switch {
		case records == 0 && released == 0:
			return lever.ReleaseResult{None: true}, nil
		case records == 0:
			// An earlier attempt released some zones, and the refused ones are released
			// now (by another runner's release?): nothing is left to delete.
			return lever.ReleaseResult{Records: released, ChangeID: strings.Join(ids, " "), TakenOver: l.takenOver}, nil
		}
		handBacks, gone, unconfirmed := l.verdicts()
		if !force && len(handBacks)+len(gone)+len(unconfirmed) > 0 && time.Since(start) < r.Wait {
			// Wait for the publishers' next syncs: a confirmation, or a source set to the
			// weight the zone holds, is written by a sync.
			attrs := []any{"cutover", p.Name, "next_read_in", poll.Round(time.Second), "gives_up_in", (r.Wait - time.Since(start)).Round(time.Second)}
			for _, u := range unconfirmed {
				log.Info("waiting for a publisher to confirm the hold", append(attrs, "member", u.Member, "owner", u.Owner, "resource", u.Resource)...)
			}
			for _, h := range handBacks {
				log.Info("waiting for a source to ask for the weight the zone holds", append(attrs, "member", h.Member, "wants", h.Wants, "holds", h.Holds, "advice", h.Advice)...)
			}
			for _, g := range gone {
				log.Info("waiting for a source to publish its member again", append(attrs, "member", g.Member, "holds", g.Holds, "advice", g.Advice)...)
			}
			if err := lever.Sleep(ctx, min(poll, max(r.Wait-time.Since(start), 0))); err != nil {
				return fail(err)
			}
			poll = min(poll+poll/2, maxReleasePoll)
			attempt = 0
			continue
		}
		if !force && len(handBacks)+len(gone)+len(unconfirmed) > 0 {
			refused := &lever.ReleaseRefusedError{Cutover: p.Name, Sets: handBacks, Gone: gone, Unconfirmed: unconfirmed}
			if r.Wait > 0 {
				refused.Waited = time.Since(start).Round(time.Millisecond)
				if refused.Waited >= time.Second {
					refused.Waited = refused.Waited.Round(time.Second)
				}
			}
			return fail(refused)
		}
		var sends []*live
		var batches []changes.Batch
		for _, part := range parts {
			var b changes.Batch
			for _, cur := range part.current {
				if cur != nil {
					b = append(b, changes.Change{Action: changes.Delete, Endpoint: cur})
				}
			}
			if len(b) == 0 {
				continue // released already, by an earlier attempt
			}
			dels, creates := part.ownershipSwaps()
			sends, batches = append(sends, part), append(batches, append(append(b, dels...), creates...))
		}
		got := make([]string, len(sends))
		errs := make([]error, len(sends))
		inParallel(len(sends), func(i int) {
			got[i], errs[i] = dns.ApplyChange(ctx, sends[i].zone, batches[i], fmt.Sprintf("crossfade cutover %s: release weights", p.Name))
		})
		var refused, failed error
		for i, err := range errs {
			var rej *provider.RejectedError
			switch {
			case err == nil:
				ids = append(ids, got[i])
				released += heldIn(sends[i])
			case errors.As(err, &rej):
				refused = cmp.Or(refused, err)
			default:
				failed = cmp.Or(failed, err)
			}
		}
		if failed == nil && refused != nil && attempt < lever.CASAttempts {
			// Rewritten since the read (a runner elsewhere resumed): read it again.
			if err := lever.Backoff(ctx, attempt); err != nil {
				return fail(err)
			}
			continue
		}
		if err := cmp.Or(failed, refused); err != nil {
			if len(ids) > 0 {
				return fail(err)
			}
			return lever.ReleaseResult{}, fmt.Errorf("release: %w", err)
		}
		return lever.ReleaseResult{Records: released, ChangeID: strings.Join(ids, " "), TakenOver: l.takenOver, Changes: handBacks, Gone: gone, Unconfirmed: unconfirmed}, nil
	}
}

// verdicts judges, in one pass, each weighted set of the plan's records (the members
// and a third cluster's, whose publishers the authority record holds alike) by what its
// ownership record says:
//   - changes: its source asks for another weight than the zone holds
//     (endpoint.WantsWeightLabel). A record that says nothing agrees, once its publisher
//     has confirmed the hold: a publisher drops the label once source and zone agree,
//     and writes it at every sync while they differ.
//   - gone: no source asks for it any more (endpoint.WantsNone): its publisher keeps it
//     while the hold lasts and deletes it at its next sync once the weights are released.
//   - unconfirmed: an owned set whose record does not confirm the hold the zone's
//     authority record states for its name and type (endpoint.ConfirmsHoldLabel): its
//     publisher has not read the zone since the hold began, or not said what its source
//     asks for. A set without an owner has no publisher to write it again.
func (l *live) verdicts() (changes []lever.HandBack, gone []lever.Departure, unconfirmed []lever.Unconfirmed) {
	holds := registry.Holds(l.current)
	for _, ms := range [][]member{l.members, l.others} {
		for _, m := range ms {
			ep := m.ep
			key := ep.Key().String()
			if a, held := holds[endpoint.Key{Name: ep.Name, Type: ep.Type}]; held && ep.Owner() != "" && ep.Labels[endpoint.ConfirmsHoldLabel] != a.HoldID() {
				unconfirmed = append(unconfirmed, lever.Unconfirmed{Member: key, Owner: ep.Owner(), Resource: ep.Resource(), Seen: ep.Labels[endpoint.ConfirmsHoldLabel]})
			}
			v, ok := ep.Labels[endpoint.WantsWeightLabel]
			holdsW := ep.Policy.Weight
			switch wants, err := strconv.ParseInt(v, 10, 64); {
			case !ok:
			case v == endpoint.WantsNone:
				gone = append(gone, lever.Departure{Member: key, Holds: holdsW,
					Advice: fmt.Sprintf("%s: publish it again (with weight %d) and sync it", cmp.Or(ep.Resource(), "its owner "+ep.Owner()+"'s source"), holdsW)})
			case err != nil:
				// Not what a publisher writes: say what is there rather than guess.
				changes = append(changes, lever.HandBack{Member: key, Wants: -1, Holds: holdsW,
					Advice: fmt.Sprintf("its ownership record says %s=%q, not a weight: sync its publisher (%s) again", endpoint.WantsWeightLabel, v, sourceOf(ep))})
			case wants != holdsW:
				changes = append(changes, lever.HandBack{Member: key, Wants: wants, Holds: holdsW, Advice: setWeightAdvice(ep, holdsW)})
			}
		}
	}
	return changes, gone, unconfirmed
}

// heldIn counts the authority records l found in its zone.
func heldIn(l *live) int {
	n := 0
	for _, cur := range l.current {
		if cur != nil {
			n++
		}
	}
	return n
}
