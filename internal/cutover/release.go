package cutover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
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
}

// Release hands the weights back to the publishers: it deletes this cutover's authority
// records, after which a sync writes the weights its sources ask for. It refuses while
// the cutover runs here, and, unless force, when the cutover is unfinished (its weights
// would then have no authority at all), has no journal here, another runner of it
// (another machine) holds its records, or a publisher asks for another weight than the
// zone holds (*ReleaseRefusedError: releasing would change traffic at its next sync).
// With force it deletes them whoever of this cutover's runners wrote them, and says whose
// they were and which weights will change; never another cutover's. Each record is
// deleted exactly as read, and the sets' ownership records, where the publishers record
// what they ask for, are rewritten as read in the same batch: a record rewritten
// meanwhile fails the batch, and the zone is read and judged again.
//
// An ALB or Cloud Map cutover's authority tags are removed by its runner when the cutover
// ends; Release removes those a runner killed before it could (this runner's, the
// journal's token), or with force every runner's of this cutover, never another
// cutover's. The rules (the instances) keep the weights (statuses) written.
func Release(ctx context.Context, cfg Config, force bool) (Released, error) {
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
	o := ReadOptions{Partial: true, Runner: registry.Runner{Token: st.token}, Takeover: force}
	for attempt := 1; ; attempt++ {
		l, err := readLive(ctx, cfg.DNS, cfg.Registry, p, o)
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
		changes := l.handBack()
		if len(changes) > 0 && !force {
			return Released{}, &ReleaseRefusedError{Cutover: p.Name, Sets: changes}
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
		rel = Released{Records: records, TakenOver: l.takenOver, Changes: changes}
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
	e.Detail = strings.Join(details, "; ")
	_, err = j.Append(e)
	return err
}
