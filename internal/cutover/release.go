package cutover

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/endpoint"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/provider"
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

// Default and longest intervals between two reads of the zone while release waits for
// the publishers: each read lists the zone, one Route 53 call of its 5 a second.
const (
	defaultReleasePoll = 10 * time.Second
	maxReleasePoll     = 30 * time.Second
)

// Unconfirmed is a weighted set of a held name whose publisher has not confirmed, since
// the hold began, what its source asks for (endpoint.ConfirmsHoldLabel): it may write
// anything at its next sync once the weights are released.
type Unconfirmed struct {
	// Member is the set's key, e.g. "app.example.com A [blue]".
	Member string
	// Owner is the owner id in its ownership record: the publisher that must confirm.
	Owner string
	// Resource is the object that published it, "" when unknown.
	Resource string
	// Seen is the hold its ownership record confirms, "" for none (an earlier hold's id
	// otherwise).
	Seen string
}

// String names the set, its publisher and what its record says.
func (u Unconfirmed) String() string {
	s := fmt.Sprintf("%s: owner %s", u.Member, u.Owner)
	if u.Resource != "" {
		s += " (" + u.Resource + ")"
	}
	if u.Seen == "" {
		return s + " has not confirmed this hold"
	}
	return s + " last confirmed an earlier hold (" + u.Seen + "), not this one"
}

// Departure is a weighted set of a held name that no source asks for any more: its
// publisher keeps it while the hold lasts, and deletes it at its next sync once the
// weights are released.
type Departure struct {
	// Member is the set's key, e.g. "app.example.com A [blue]".
	Member string
	// Holds is the set's weight in the zone.
	Holds int64
	// Advice says how to keep the set.
	Advice string
}

// String says what the publisher asks.
func (d Departure) String() string {
	return fmt.Sprintf("%s: no source asks for it any more, the zone holds weight %d", d.Member, d.Holds)
}

// Effect says what a release lets happen to the set.
func (d Departure) Effect() string {
	return fmt.Sprintf("%s (weight %d) goes away at its publisher's next sync", d.Member, d.Holds)
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
func (l *live) verdicts() (changes []HandBack, gone []Departure, unconfirmed []Unconfirmed) {
	holds := registry.Holds(l.current)
	for _, ms := range [][]member{l.members, l.others} {
		for _, m := range ms {
			ep := m.ep
			key := ep.Key().String()
			if a, held := holds[endpoint.Key{Name: ep.Name, Type: ep.Type}]; held && ep.Owner() != "" && ep.Labels[endpoint.ConfirmsHoldLabel] != a.HoldID() {
				unconfirmed = append(unconfirmed, Unconfirmed{Member: key, Owner: ep.Owner(), Resource: ep.Resource(), Seen: ep.Labels[endpoint.ConfirmsHoldLabel]})
			}
			v, ok := ep.Labels[endpoint.WantsWeightLabel]
			holdsW := ep.Policy.Weight
			switch wants, err := strconv.ParseInt(v, 10, 64); {
			case !ok:
			case v == endpoint.WantsNone:
				gone = append(gone, Departure{Member: key, Holds: holdsW,
					Advice: fmt.Sprintf("%s: publish it again (with weight %d) and sync it", cmp.Or(ep.Resource(), "its owner "+ep.Owner()+"'s source"), holdsW)})
			case err != nil:
				// Not what a publisher writes: say what is there rather than guess.
				changes = append(changes, HandBack{Member: key, Wants: -1, Holds: holdsW,
					Advice: fmt.Sprintf("its ownership record says %s=%q, not a weight: sync its publisher (%s) again", endpoint.WantsWeightLabel, v, sourceOf(ep))})
			case wants != holdsW:
				changes = append(changes, HandBack{Member: key, Wants: wants, Holds: holdsW, Advice: setWeightAdvice(ep, holdsW)})
			}
		}
	}
	return changes, gone, unconfirmed
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
	poll := cmp.Or(o.Poll, defaultReleasePoll)
	start := time.Now()
	p := cfg.Plan
	paths := PathsFor(cfg.StateDir, p.Name)
	entries, err := journal.Read(paths.Journal)
	exists := !errors.Is(err, os.ErrNotExist)
	switch {
	case err != nil && exists:
		return Released{}, err
	case !exists && !force:
		return Released{}, fmt.Errorf("cutover %s has no journal at %s: it did not run from here (release --force deletes its authority records all the same)", p.Name, paths.Journal)
	}
	st := replay(entries)
	if st.started && st.done == "" && !force {
		return Released{}, fmt.Errorf("cutover %s is unfinished: finish it (run --resume) or abort it before releasing its weights", p.Name)
	}
	lock, err := journal.Acquire(paths.Lock, journal.Holder{By: cfg.By, Cutover: p.Name})
	if err != nil {
		return Released{}, err
	}
	defer lock.Release()
	if selects(p) {
		p = clonePlan(p)
	}
	lv := newLever(Config{Plan: p, DNS: cfg.DNS, Registry: cfg.Registry, ELB: cfg.ELB, ServiceDiscovery: cfg.ServiceDiscovery})
	if selects(p) {
		// The records or rules the cutover selected at start hold its authority records;
		// without a journal (release --force), those the plan selects now.
		if st.selected != nil {
			applySelection(p, *st.selected)
		} else if _, err := selectNow(ctx, lv, p); err != nil {
			return Released{}, err
		}
	}
	var rel Released
	var id string
	if h, ok := lv.(holdReleaser); ok {
		mode := ownRefuseOthers
		if force {
			mode = everyRunner
		}
		n, others, err := h.letGo(ctx, registry.Runner{Token: st.token}, mode)
		if err != nil {
			return Released{}, fmt.Errorf("release: %w", err)
		}
		rel = Released{Records: n, TakenOver: others}
		return rel, journalRelease(paths, exists, cfg.By, "", rel)
	}
	ro := ReadOptions{Partial: true, Runner: registry.Runner{Token: st.token}, Takeover: force}
	for attempt := 1; ; attempt++ {
		l, err := readLive(ctx, cfg.DNS, cfg.Registry, p, ro)
		if err != nil {
			return Released{}, err
		}
		var b plan.Batch
		for _, cur := range l.current {
			if cur != nil {
				b = append(b, plan.Change{Action: plan.Delete, Endpoint: cur})
			}
		}
		if len(b) == 0 {
			return Released{}, nil
		}
		records := len(b)
		changes, gone, unconfirmed := l.verdicts()
		if !force && len(changes)+len(gone)+len(unconfirmed) > 0 && time.Since(start) < o.Wait {
			// Wait for the publishers' next syncs: a confirmation, or a source set to the
			// weight the zone holds, is written by a sync.
			attrs := []any{"cutover", p.Name, "next_read_in", poll.Round(time.Second), "gives_up_in", (o.Wait - time.Since(start)).Round(time.Second)}
			for _, u := range unconfirmed {
				log.Info("waiting for a publisher to confirm the hold", append(attrs, "member", u.Member, "owner", u.Owner, "resource", u.Resource)...)
			}
			for _, h := range changes {
				log.Info("waiting for a source to ask for the weight the zone holds", append(attrs, "member", h.Member, "wants", h.Wants, "holds", h.Holds, "advice", h.Advice)...)
			}
			for _, g := range gone {
				log.Info("waiting for a source to publish its member again", append(attrs, "member", g.Member, "holds", g.Holds, "advice", g.Advice)...)
			}
			if err := sleep(ctx, min(poll, max(o.Wait-time.Since(start), 0))); err != nil {
				return Released{}, err
			}
			poll = min(poll+poll/2, maxReleasePoll)
			attempt = 0
			continue
		}
		if !force && len(changes)+len(gone)+len(unconfirmed) > 0 {
			refused := &ReleaseRefusedError{Cutover: p.Name, Sets: changes, Gone: gone, Unconfirmed: unconfirmed}
			if o.Wait > 0 {
				refused.Waited = time.Since(start).Round(time.Millisecond)
				if refused.Waited >= time.Second {
					refused.Waited = refused.Waited.Round(time.Second)
				}
			}
			return Released{}, refused
		}
		dels, creates := l.ownershipSwaps()
		b = append(append(b, dels...), creates...)
		id, err = cfg.DNS.ApplyChange(ctx, l.zone, b, fmt.Sprintf("crossfade cutover %s: release weights", p.Name))
		var rej *provider.RejectedError
		if errors.As(err, &rej) && attempt < casAttempts {
			// Rewritten since the read (a runner elsewhere resumed): read it again.
			if err := backoff(ctx, attempt); err != nil {
				return Released{}, err
			}
			continue
		}
		if err != nil {
			return Released{}, fmt.Errorf("release: %w", err)
		}
		rel = Released{Records: records, TakenOver: l.takenOver, Changes: changes, Gone: gone, Unconfirmed: unconfirmed}
		break
	}
	return rel, journalRelease(paths, exists, cfg.By, id, rel)
}

// journalRelease journals what Release did in the cutover's journal, when it has one.
func journalRelease(paths Paths, exists bool, by, changeID string, rel Released) error {
	if !exists {
		return nil
	}
	j, _, err := journal.Open(paths.Journal)
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

// ReleaseRefusedError is a release that would change traffic, or might: publishers ask
// for other weights than the zone holds, or for no member at all, and would write that at
// their next sync; or a publisher has not confirmed since the hold began what its source
// asks for, and could write anything.
type ReleaseRefusedError struct {
	// Cutover is the cutover's name.
	Cutover string
	// Sets are the weighted sets whose weight would change.
	Sets []HandBack
	// Gone are the weighted sets no source asks for any more: deleted at their
	// publisher's next sync.
	Gone []Departure
	// Unconfirmed are the weighted sets whose publisher has not confirmed this hold.
	Unconfirmed []Unconfirmed
	// Waited is how long release waited for the publishers (release --wait); 0 when it
	// did not wait.
	Waited time.Duration
}

// Error names each set, both weights (or what is missing) and what to do.
func (e *ReleaseRefusedError) Error() string {
	var b strings.Builder
	if len(e.Sets)+len(e.Gone) > 0 {
		fmt.Fprintf(&b, "cutover %s: release would change traffic: once released, each publisher writes the weight its source asks for at its next sync, and these sources ask for other weights than the zone holds:", e.Cutover)
		for _, h := range e.Sets {
			fmt.Fprintf(&b, "\n  %s: %s", h, h.Advice)
		}
		for _, g := range e.Gone {
			fmt.Fprintf(&b, "\n  %s: %s", g, g.Advice)
		}
		b.WriteString("\nset each source to the weight the zone holds and sync it, then release again; or `crossfade cutover release --force` to let those weights apply")
	}
	if len(e.Unconfirmed) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "cutover %s: release refused: no confirmation since the hold began from the publishers of these sets, so what they would write once released is unknown:", e.Cutover)
		for _, u := range e.Unconfirmed {
			fmt.Fprintf(&b, "\n  %s", u)
		}
		b.WriteString("\nrun `crossfade sync` for that cluster, or wait for its controller: it confirms within 5 minutes; `crossfade cutover release --wait 10m` waits; `--force` releases without")
	}
	if e.Waited > 0 {
		fmt.Fprintf(&b, "\nwaited %s for the publishers", e.Waited)
	}
	return b.String()
}
