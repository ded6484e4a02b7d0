package cutover

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
	"github.com/crossfade-io/crossfade/internal/plan"
	"github.com/crossfade-io/crossfade/internal/registry"
)

// Gate is one check a step must pass for the whole of its pause.
type Gate interface {
	Name() string
	Check(ctx context.Context, s gate.Step) gate.Result
}

// Journal entry kinds, in the order a cutover writes them.
const (
	kindStart         = "start"
	kindTTLLowered    = "ttl-lowered"
	kindIntent        = "intent"
	kindWritten       = "written"
	kindInSync        = "insync"
	kindStepPassed    = "step-passed"
	kindStepFailed    = "step-failed"
	kindControl       = "control"
	kindRollback      = "rollback"
	kindRollbackHeld  = "rollback-held"
	kindDone          = "done"
	outcomeCompleted  = "completed"
	outcomeRolledBack = "rolled-back"
)

// Config is everything a cutover run needs; cmd builds it from flags.
type Config struct {
	// Plan is the validated plan file.
	Plan *spec.Plan
	// DNS reads and writes the zone.
	DNS DNS
	// Registry finds the members' ownership records.
	Registry *registry.TXT
	// StateDir holds the journal, lock, control and report files, one set per cutover.
	StateDir string
	// By names who runs it (user@host), for the journal and report.
	By string
	// NewGate builds a gate from its spec; nil uses NewGate with DNSServers.
	NewGate func(g spec.Gate) (Gate, error)
	// DNSServers are asked by DNS gates whose spec lists no servers.
	DNSServers []string
	// CheckInterval is the time between gate checks during a pause; default 2s.
	CheckInterval time.Duration
	// PollInterval is the time between INSYNC polls; default 1s.
	PollInterval time.Duration
	// Progress receives events for the terminal; nil discards them.
	Progress Progress
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// Paths are the files of one cutover under a state directory.
type Paths struct {
	Journal, Lock, Control, Report string
}

// PathsFor returns the files of the cutover named name under dir.
func PathsFor(dir, name string) Paths {
	base := filepath.Join(dir, name)
	return Paths{Journal: base + ".journal", Lock: base + ".lock", Control: base + ".control", Report: base + ".report.json"}
}

// runner is one run of one cutover, holding its lock.
type runner struct {
	cfg   Config
	p     *spec.Plan
	paths Paths
	j     *journal.Journal
	log   *slog.Logger
	gates [][]Gate // per step
	live  *live
	start map[string]int64
	// promoted makes the remaining steps jump to the last one, held for the TTL only.
	promoted bool
	// paused makes the next step wait for resume before it holds (set from the journal).
	paused bool
	// startedAt is when the cutover first started, for its total time limit.
	startedAt time.Time
	// pending are control commands read but not yet acted on.
	pending []Command
	// aborted is set when an abort arrives while paused.
	aborted   bool
	abortedBy string
	// closeFn releases the journal and the lock.
	closeFn func()
}

func (r *runner) close() { r.closeFn() }

// ErrAborted is returned by a run that rolled back on request.
var ErrAborted = errors.New("aborted on request: rolled back")

// RollbackError is returned by a run that rolled back because a step failed.
type RollbackError struct {
	Step   int
	Reason string
}

// Error says which step failed and why.
func (e *RollbackError) Error() string {
	return fmt.Sprintf("step %d failed: %s: rolled back", e.Step+1, e.Reason)
}

// Run runs the cutover from its first step, or, with resume, continues it from its
// journal after an interruption (from the first step when there is none yet). It returns nil when the cutover completed,
// *RollbackError or ErrAborted when it rolled back, and other errors when it could not
// go on (the journal then tells `run --resume` where to continue).
func Run(ctx context.Context, cfg Config, resume bool) (*Report, error) {
	r, entries, err := open(cfg)
	if err != nil {
		return nil, err
	}
	defer r.close()
	switch {
	case len(entries) > 0 && !resume:
		return nil, fmt.Errorf("cutover %s already has a journal (%s, started %s): continue it with run --resume, or move the file away to start afresh",
			r.p.Name, r.paths.Journal, entries[0].Time.Format(time.RFC3339))
	case len(entries) == 0 && resume:
		// Killed before its first entry, or never run: nothing was written, so starting
		// from the beginning is what resuming means.
		r.log.Info("no journal to resume: starting from the first step", "journal", r.paths.Journal)
	}
	st := replay(entries)
	if st.done != "" {
		return BuildReport(r.p.Name, entries), nil
	}
	if err := r.prepare(ctx, st); err != nil {
		return nil, err
	}
	runErr := r.drive(ctx, st)
	all, err := journal.Read(r.paths.Journal)
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	rep := BuildReport(r.p.Name, all)
	if rep.Outcome != "" {
		if err := rep.save(r.paths.Report); err != nil {
			runErr = errors.Join(runErr, err)
		}
	}
	return rep, runErr
}

func open(cfg Config) (*runner, []journal.Entry, error) {
	p := cfg.Plan
	paths := PathsFor(cfg.StateDir, p.Name)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lock, err := journal.Acquire(paths.Lock, journal.Holder{By: cfg.By, Cutover: p.Name})
	if err != nil {
		return nil, nil, err
	}
	j, entries, err := journal.Open(paths.Journal)
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = 2 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.Progress == nil {
		cfg.Progress = discardProgress{}
	}
	if cfg.NewGate == nil {
		servers := cfg.DNSServers
		cfg.NewGate = func(g spec.Gate) (Gate, error) { return NewGate(g, servers) }
	}
	r := &runner{cfg: cfg, p: p, paths: paths, j: j, log: log.With("cutover", p.Name)}
	r.closeFn = func() { j.Close(); lock.Release() }
	return r, entries, nil
}

// state is what a journal says about a cutover so far.
type state struct {
	started   bool
	startedAt time.Time
	start     map[string]int64
	// next is the first step not yet passed.
	next int
	// rollingBack is set once a rollback began; rollbackNext is its first stop not yet held.
	rollingBack  bool
	rollbackNext int
	reason       string
	ttlLowered   bool
	promoted     bool
	// paused is set when the last pause was not followed by resume or promote: a runner
	// resumed after a crash stays paused, as the operator left it.
	paused bool
	done   string
}

// replay folds the journal into a state. Intents without a later pass are redone: the
// weights they write are absolute, so writing them twice is harmless.
func replay(entries []journal.Entry) state {
	st := state{}
	for _, e := range entries {
		switch e.Kind {
		case kindStart:
			st.started, st.start, st.startedAt = true, e.Weights, e.Time
		case kindTTLLowered:
			st.ttlLowered = true
		case kindStepPassed:
			if !st.rollingBack {
				st.next = e.Step + 1
			}
		case kindRollback:
			st.rollingBack, st.reason = true, e.Detail
		case kindStepFailed:
			// A failed step is followed by its rollback: a crash in between must not
			// make a resume run the step again.
			st.rollingBack, st.reason = true, e.Detail
		case kindControl:
			switch e.Detail {
			case CommandPromote:
				st.promoted, st.paused = true, false
			case CommandPause:
				st.paused = true
			case CommandAbort:
				if !st.rollingBack {
					st.rollingBack, st.reason = true, "aborted by "+e.By
				}
			case CommandResume:
				st.paused = false
			}
		case kindRollbackHeld:
			st.rollbackNext = e.Step + 1
		case kindDone:
			st.done = e.Detail
		}
	}
	return st
}

// Abort rolls back a cutover that no runner holds: one interrupted before it finished.
// (A running cutover is aborted through SendCommand; its runner rolls back.) It returns
// *journal.LockedError when a runner holds the cutover.
func Abort(ctx context.Context, cfg Config) (*Report, error) {
	r, entries, err := open(cfg)
	if err != nil {
		return nil, err
	}
	defer r.close()
	st := replay(entries)
	switch {
	case !st.started:
		return nil, fmt.Errorf("cutover %s: nothing to abort: it has not started (no journal at %s)", r.p.Name, r.paths.Journal)
	case st.done != "":
		return BuildReport(r.p.Name, entries), nil
	}
	if err := r.prepare(ctx, st); err != nil {
		return nil, err
	}
	if st.rollingBack {
		err = r.rollback(ctx, st.rollbackNext, st.reason)
	} else {
		err = r.rollback(ctx, 0, "aborted by "+cfg.By)
	}
	all, rerr := journal.Read(r.paths.Journal)
	if rerr != nil {
		return nil, errors.Join(err, rerr)
	}
	rep := BuildReport(r.p.Name, all)
	if rep.Outcome != "" {
		err = errors.Join(err, rep.save(r.paths.Report))
	}
	return rep, err
}

// Release hands the weights back to the publishers: it deletes this cutover's authority
// records, after which a sync writes the weights its sources ask for. It refuses while
// the cutover runs or is unfinished (its weights would then have no authority at all).
func Release(ctx context.Context, cfg Config) (int, error) {
	r, entries, err := open(cfg)
	if err != nil {
		return 0, err
	}
	defer r.close()
	if st := replay(entries); st.started && st.done == "" {
		return 0, fmt.Errorf("cutover %s is unfinished: finish it (run --resume) or abort it before releasing its weights", r.p.Name)
	}
	l, err := readLive(ctx, cfg.DNS, cfg.Registry, r.p)
	if err != nil {
		return 0, err
	}
	var b plan.Batch
	for _, cur := range l.current {
		if cur != nil {
			b = append(b, plan.Change{Action: plan.Delete, Endpoint: cur})
		}
	}
	if len(b) == 0 {
		return 0, nil
	}
	id, err := cfg.DNS.ApplyChange(ctx, l.zone, b, fmt.Sprintf("crossfade cutover %s: release weights", r.p.Name))
	if err != nil {
		return 0, fmt.Errorf("release: %w", err)
	}
	_, err = r.j.Append(journal.Entry{Kind: "released", Step: -1, ChangeID: id, By: cfg.By})
	return len(b), err
}
