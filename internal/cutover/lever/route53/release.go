package route53

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/crossfade-io/crossfade/internal/changes"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
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
	p, force, log := d.p, r.Force, r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	poll := cmp.Or(r.Poll, defaultReleasePoll)
	start := time.Now()
	ro := lever.ReadOptions{Partial: true, Runner: registry.Runner{Token: r.Token}, Takeover: force}
	for attempt := 1; ; attempt++ {
		l, err := readLive(ctx, d.dns, d.reg, p, ro)
		if err != nil {
			return lever.ReleaseResult{}, err
		}
		var b changes.Batch
		for _, cur := range l.current {
			if cur != nil {
				b = append(b, changes.Change{Action: changes.Delete, Endpoint: cur})
			}
		}
		if len(b) == 0 {
			return lever.ReleaseResult{None: true}, nil
		}
		records := len(b)
		changes, gone, unconfirmed := l.verdicts()
		if !force && len(changes)+len(gone)+len(unconfirmed) > 0 && time.Since(start) < r.Wait {
			// Wait for the publishers' next syncs: a confirmation, or a source set to the
			// weight the zone holds, is written by a sync.
			attrs := []any{"cutover", p.Name, "next_read_in", poll.Round(time.Second), "gives_up_in", (r.Wait - time.Since(start)).Round(time.Second)}
			for _, u := range unconfirmed {
				log.Info("waiting for a publisher to confirm the hold", append(attrs, "member", u.Member, "owner", u.Owner, "resource", u.Resource)...)
			}
			for _, h := range changes {
				log.Info("waiting for a source to ask for the weight the zone holds", append(attrs, "member", h.Member, "wants", h.Wants, "holds", h.Holds, "advice", h.Advice)...)
			}
			for _, g := range gone {
				log.Info("waiting for a source to publish its member again", append(attrs, "member", g.Member, "holds", g.Holds, "advice", g.Advice)...)
			}
			if err := lever.Sleep(ctx, min(poll, max(r.Wait-time.Since(start), 0))); err != nil {
				return lever.ReleaseResult{}, err
			}
			poll = min(poll+poll/2, maxReleasePoll)
			attempt = 0
			continue
		}
		if !force && len(changes)+len(gone)+len(unconfirmed) > 0 {
			refused := &lever.ReleaseRefusedError{Cutover: p.Name, Sets: changes, Gone: gone, Unconfirmed: unconfirmed}
			if r.Wait > 0 {
				refused.Waited = time.Since(start).Round(time.Millisecond)
				if refused.Waited >= time.Second {
					refused.Waited = refused.Waited.Round(time.Second)
				}
			}
			return lever.ReleaseResult{}, refused
		}
		dels, creates := l.ownershipSwaps()
		b = append(append(b, dels...), creates...)
		id, err := d.dns.ApplyChange(ctx, l.zone, b, fmt.Sprintf("crossfade cutover %s: release weights", p.Name))
		var rej *provider.RejectedError
		if errors.As(err, &rej) && attempt < lever.CASAttempts {
			// Rewritten since the read (a runner elsewhere resumed): read it again.
			if err := lever.Backoff(ctx, attempt); err != nil {
				return lever.ReleaseResult{}, err
			}
			continue
		}
		if err != nil {
			return lever.ReleaseResult{}, fmt.Errorf("release: %w", err)
		}
		return lever.ReleaseResult{Records: records, ChangeID: id, TakenOver: l.takenOver, Changes: changes, Gone: gone, Unconfirmed: unconfirmed}, nil
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
