package cutover

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/lever"
	"github.com/crossfade-io/crossfade/internal/cutover/lever/alb"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
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
	kindResumed       = "resumed"
	kindRetire        = "retire"
	kindReleased      = "released"
	kindTakeover      = "takeover"
	kindDrift         = "drift" // weights in the zone the runner did not write, and what it did (driftData)
	outcomeCompleted  = "completed"
	outcomeRolledBack = "rolled-back"
)

// Config is everything a cutover run needs; cmd builds it from flags.
type Config struct {
	// Plan is the validated plan file.
	Plan *spec.Plan
	// Levers builds the lever the plan pulls and the clients its gates call (NewLevers:
	// the one place that maps a plan's lever to its constructor). Building calls no AWS
	// API: what a lever lacks is found when it is pulled, and a runner that only replays
	// its journal (or takes commands) calls none.
	Levers lever.Factory
	// Lever, when set, is pulled instead of the one Levers builds (its gates get no
	// clients): for tests and embedders with a lever of their own.
	Lever Lever
	// StateDir holds the journal, lock, control and report files, one set per cutover.
	StateDir string
	// Journals gives the store of the cutover named name's journal and lock; nil keeps
	// them as files under StateDir (journal.Files). Its control commands and report stay
	// files under StateDir either way.
	Journals func(name string) journal.Store
	// By names who runs it (user@host), for the journal and report.
	By string
	// NewGate builds a gate from its spec; nil uses NewGate with DNSServers and the
	// clients Levers gives.
	NewGate func(g spec.Gate) (Gate, error)
	// DNSServers are asked by DNS gates whose spec lists no servers.
	DNSServers []string
	// CheckInterval is the time between gate checks during a pause; default 2s.
	CheckInterval time.Duration
	// DriftInterval is how often a hold compares the weights with what the lever reads
	// (besides at its first check and before the step passes); default 15 checks (30 s).
	// Reading the weights is a listing of the whole zone for the DNS lever: at every 2 s
	// check a 3,000-record zone alone took more than Route 53's 5 requests a second per
	// account, throttling every other client of the account for as long as a step holds.
	DriftInterval time.Duration
	// PollInterval is the time between INSYNC polls; default 1s.
	PollInterval time.Duration
	// WriteRetryFor is how long a forward write (a step, lowering or restoring the TTL)
	// keeps being retried while it fails transiently (AWS throttling or errors that outlast
	// the SDK's own retries) before the run ends with its error; default 5 min, negative
	// retries nothing. A rollback's writes are retried for as long as the run lasts.
	WriteRetryFor time.Duration
	// WriteRetryBackoff is the first wait before such a retry, doubled at each one up to
	// 30 s, with jitter; default 1 s.
	WriteRetryBackoff time.Duration
	// Progress receives events for the terminal; nil discards them.
	Progress Progress
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
}

// Paths are the files of one cutover under a state directory.
type Paths struct {
	// Control is a directory: one file per command.
	Journal, Lock, Control, Report string
}

// PathsFor returns the files of the cutover named name under dir.
func PathsFor(dir, name string) Paths {
	base := filepath.Join(dir, name)
	return Paths{Journal: base + ".journal", Lock: base + ".lock", Control: base + ".control.d", Report: base + ".report.json"}
}

// store is the journal and lock files of paths as a journal.Store.
func (p Paths) store() journal.Store { return journal.Files(p.Journal, p.Lock) }

// journalStore is the store of the cutover named name's journal and lock: cfg.Journals',
// or the files under StateDir.
func (cfg Config) journalStore(name string) journal.Store {
	if cfg.Journals != nil {
		return cfg.Journals(name)
	}
	return PathsFor(cfg.StateDir, name).store()
}

// Journal step numbers of the writes that are not steps; rollback stop k is -2-k.
const (
	stepNone       = -1
	stepTTLLower   = -100
	stepTTLRestore = -101
)

// runner is one run of one cutover, holding its lock.
type runner struct {
	cfg   Config
	p     *spec.Plan
	paths Paths
	// store holds the journal and the lock; j appends to the journal; cut is the length
	// of the torn last entry open cut off (0 for none), for Abort's check.
	store journal.Store
	j     journal.Writer
	cut   int64
	log   *slog.Logger
	gates [][]Gate // per step
	// lever is what the cutover pulls; live is the lever as last read (or as the last
	// write left it).
	lever Lever
	live  Snapshot
	// cloudWatch reads the ALB's metrics for retire.cloudWatch (the lever's gate
	// clients').
	cloudWatch gate.MetricsAPI
	// inEffect is when the last write was seen in effect: where the ALB traffic gate's
	// window begins.
	inEffect time.Time
	// compared is when the weights were last read and compared with those written (see
	// Config.DriftInterval); zero makes the next check compare.
	compared time.Time
	// readFails counts the reads for a compare that failed in a row since failingSince;
	// nextRead is when the next may be tried (see checkDrift).
	readFails    int
	failingSince time.Time
	nextRead     time.Time
	start        map[string]int64
	// startTTL is the members' TTL when the cutover started: waited out after lowering
	// it. startTTLs are each record's, restored at the end (nil for a journal from
	// before they were kept: startTTL is restored everywhere then).
	startTTL  int64
	startTTLs map[spec.Record]int64
	// startedAt is when the cutover first started, for its total time limit.
	startedAt time.Time
	// promoted makes the remaining steps jump to the last one, held for the TTL only (its
	// gates still judge it: a promote skips pauses, never measurement).
	promoted bool
	// skipGates (promote --skip-gates, by skipGatesBy) makes the remaining steps pass
	// without their gates: journaled with each step it passes, flagged in the report.
	skipGates   bool
	skipGatesBy string
	// paused holds the cutover at its weights until resume; pausedFor is the time spent
	// paused (not counted against the total time limit), pausedAt when the pause began.
	paused    bool
	pausedAt  time.Time
	pausedFor time.Duration
	// aborted is set by an abort command; the runner then rolls back.
	aborted   bool
	abortedBy string
	// rollingBack makes reads partial and control commands ignored.
	rollingBack bool
	// seen are the control commands already journaled.
	seen map[string]bool
	// ttlTouched is set once the TTL was (or may have been) lowered: the end restores it.
	ttlTouched bool
	// id is the runner this run is: its token (from the journal's start entry, so the same
	// across resumes), host and pid, written in the authority records.
	id registry.Runner
	// takeover lets this run replace another runner's authority records (an abort).
	takeover bool
	// held is set once this process has written the authority records.
	held bool
	// selected is what this run selected at start, journaled with the start entry; nil
	// for a plan that lists what it moves, and on a resume (the journal's is used).
	selected *Selection
	// tookOver are the runners whose records this run replaced, journaled once each.
	tookOver map[registry.Runner]bool
	// expect is each member's weight as this run last wrote it (or, before its first
	// write, found it), by key: a weight in the zone that differs is drift. nil compares
	// nothing: the next write overwrites what it finds (after a resume from a drift pause).
	expect map[string]int64
	// expected says what expect is, for the drift error: "the cutover wrote" or the like.
	expected string
	// resumeLanded are, by member key, the weights the write of the run before this one
	// may still leave after this run read the lever (its last intent's, see state.lastSent):
	// no drift until this run's first write is in effect. A Cloud Map status takes effect
	// seconds after it is sent, so a run killed just after sending one sees it land
	// under its successor.
	resumeLanded map[string][]int64
	// pauseWhy is shown while paused for another reason than a pause command.
	pauseWhy string
	// closeFn releases the journal and the lock.
	closeFn func()
}

func (r *runner) close() { r.closeFn() }

// append journals e, saying who runs the cutover.
func (r *runner) append(e journal.Entry) (journal.Entry, error) {
	if e.By == "" {
		e.By = r.cfg.By
	}
	return r.j.Append(e)
}

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

// rollbackDue says why, and from which stop, a cutover rolls back.
type rollbackDue struct {
	// step is the step that failed, or that was current when aborted.
	step    int
	reason  string
	aborted bool
	// begun is set when the rollback entry is journaled; stops and from then come from it.
	begun bool
	stops []map[string]int64
	from  int
}

// abortDue is the rollback an abort by by asks for, at step.
func abortDue(step int, by string) *rollbackDue {
	return &rollbackDue{step: step, reason: "aborted by " + by, aborted: true}
}

// err is what a run that rolled back returns.
func (d *rollbackDue) err() error {
	if d.aborted {
		return ErrAborted
	}
	return &RollbackError{Step: d.step, Reason: d.reason}
}

// Run runs the cutover from its first step, or, with resume, continues it from its
// journal after an interruption (from the first step when there is none yet). It returns
// nil when the cutover completed, *RollbackError or ErrAborted when it rolled back (now
// or before), and other errors when it could not go on (the journal then tells `run
// --resume` where to continue).
func Run(ctx context.Context, cfg Config, resume bool) (*Report, error) {
	r, entries, err := open(cfg)
	if err != nil {
		return nil, err
	}
	defer r.close()
	st := replay(entries)
	switch {
	case len(entries) > 0 && !resume && st.done != "":
		return nil, fmt.Errorf("cutover %s already ran (%s, started %s): its journal %s is its audit trail; move it away to run the cutover again",
			r.p.Name, st.done, st.startedAt.Format(time.RFC3339), r.store.Where())
	case len(entries) > 0 && !resume:
		return nil, fmt.Errorf("cutover %s is unfinished (journal %s, started %s): continue it with run --resume, or roll it back with abort",
			r.p.Name, r.store.Where(), entries[0].Time.Format(time.RFC3339))
	case len(entries) == 0 && resume:
		// Killed before its first entry, or never run: nothing was written, so starting
		// from the beginning is what resuming means.
		r.log.Info("no journal to resume: starting from the first step", "journal", r.store.Where())
	}
	if st.done != "" {
		// Commands that landed as the cutover ended, after its runner last looked: say
		// what became of them.
		r.seen = st.seen
		if err := r.closeCommands(st.done); err != nil {
			return nil, err
		}
		if !st.released {
			// A runner killed between journaling the end and letting go of the rules left
			// its authority tags: this is the same runner (the journal's token).
			r.id = thisRunner(st.token)
			if err := r.fixSelection(ctx, st); err == nil {
				r.letGo(ctx)
			}
		}
		return BuildReport(r.p.Name, entries), st.outcomeErr()
	}
	if h := planHash(r.p); st.planHash != "" && st.planHash != h {
		return nil, fmt.Errorf("cutover %s: the plan's records, members or weights changed since it started (plan %s, journal %s): resume with the plan file it started with, or abort it",
			r.p.Name, h, st.planHash)
	}
	token := st.token
	if !st.started {
		token = newToken()
	}
	r.id = thisRunner(token)
	if st.started {
		if _, err := r.append(journal.Entry{Kind: kindResumed, Step: stepNone, Detail: "runner " + r.id.String()}); err != nil {
			return nil, err
		}
	}
	runErr := r.drive(ctx, st)
	return r.finish(runErr)
}

// finish builds the report from the journal, and saves it once the cutover has ended,
// after journaling the commands still waiting then as ignored (closeCommands).
func (r *runner) finish(runErr error) (*Report, error) {
	all, _, err := r.store.Read()
	if err != nil {
		return nil, errors.Join(runErr, err)
	}
	if len(all) == 0 {
		// Refused before it started (the zone or the plan said no): nothing to report.
		return nil, runErr
	}
	if st := replay(all); st.done != "" {
		if err := r.closeCommands(st.done); err != nil {
			return nil, errors.Join(runErr, err)
		}
		if all, _, err = r.store.Read(); err != nil {
			return nil, errors.Join(runErr, err)
		}
	}
	rep := BuildReport(r.p.Name, all)
	if rep.Outcome != "" {
		runErr = errors.Join(runErr, rep.save(r.paths.Report))
	}
	return rep, runErr
}

// planHash identifies what a plan moves: zone, records (or listener rules and target
// groups), members and weights. Pauses, gates and timeouts may be edited between an
// interruption and its resume; these not.
func planHash(p *spec.Plan) string {
	var steps []spec.Weights
	for _, s := range p.Steps {
		steps = append(steps, s.Weights)
	}
	// A selecting plan hashes as written, not with the selection the engine fills in.
	records, alb := p.Records, p.ALB
	if p.SelectAllWeighted {
		records = nil
	}
	if alb != nil && alb.Select != nil {
		a := *alb
		a.ListenerRules = nil
		alb = &a
	}
	b, _ := json.Marshal(struct {
		Zone, ZoneID, From, To string
		Records                []spec.Record
		Steps, RollbackSteps   []spec.Weights
		RollbackMode           string
		LowerTTL               int64
		// Left out when nil, so that a Route 53 plan hashes as before the ALB lever.
		ALB *spec.ALB `json:",omitempty"`
		// Left out when false, so that a plan listing its records hashes as before.
		SelectAllWeighted bool `json:",omitempty"`
		// Left out when nil, so that the other levers' plans hash as before it.
		CloudMap *spec.CloudMap `json:",omitempty"`
		// Left out when nil, so that a plan of one zone hashes as before spec.zones.
		Zones []string `json:",omitempty"`
	}{p.Zone, p.ZoneID, p.From, p.To, records, steps, p.Rollback.Steps, p.Rollback.Mode, p.LowerTTL, alb, p.SelectAllWeighted, p.CloudMap, p.Zones})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func open(cfg Config) (*runner, []journal.Entry, error) {
	// The runner's own copy: a selecting plan's records or rules are filled in by it.
	p := clonePlan(cfg.Plan)
	cfg.Plan = p
	paths := PathsFor(cfg.StateDir, p.Name)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	lv, clients, err := newLever(cfg)
	if err != nil {
		return nil, nil, err
	}
	store := cfg.journalStore(p.Name)
	lock, err := store.Acquire(journal.Holder{By: cfg.By, Cutover: p.Name})
	if err != nil {
		return nil, nil, err
	}
	j, entries, cut, err := store.Open()
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	if cut > 0 {
		log.Warn("the journal ended in a torn line, left by a crash mid-write: cut off (its action was never taken)", "cutover", p.Name, "journal", store.Where(), "bytes", cut)
	}
	if cfg.CheckInterval <= 0 {
		cfg.CheckInterval = 2 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.DriftInterval <= 0 {
		cfg.DriftInterval = 15 * cfg.CheckInterval
	}
	if cfg.WriteRetryFor == 0 {
		cfg.WriteRetryFor = defaultWriteRetryFor
	}
	if cfg.WriteRetryBackoff <= 0 {
		cfg.WriteRetryBackoff = defaultWriteRetryBackoff
	}
	if cfg.Progress == nil {
		cfg.Progress = discardProgress{}
	}
	if cfg.NewGate == nil {
		cfg.NewGate = func(g spec.Gate) (Gate, error) { return NewGate(g, clients) }
	}
	r := &runner{cfg: cfg, p: p, paths: paths, store: store, j: j, cut: cut, lever: lv, cloudWatch: clients.CloudWatch, log: log.With("cutover", p.Name), seen: map[string]bool{}, tookOver: map[registry.Runner]bool{}}
	r.closeFn = func() { j.Close(); lock.Release() }
	r.cfg.Progress = skipFlag{next: cfg.Progress, on: &r.skipGates}
	return r, entries, nil
}

// skipFlag marks every event after a promote --skip-gates (Event.GatesSkipped), so that
// every live view flags the unmeasured steps without each event saying so.
type skipFlag struct {
	next Progress
	on   *bool
}

func (p skipFlag) Event(e Event) {
	e.GatesSkipped = e.GatesSkipped || *p.on
	p.next.Event(e)
}

// state is what a journal says about a cutover so far.
type state struct {
	started   bool
	startedAt time.Time
	start     map[string]int64
	startTTL  int64
	startTTLs map[spec.Record]int64
	planHash  string
	// selected is the start entry's selection, nil when the plan lists what it moves.
	selected *Selection
	// token is the runner token of the start entry ("" in journals from before tokens).
	token string
	// next is the first step not yet passed.
	next int
	// rollback is set once a rollback is due (a step failed, or an abort came).
	rollback   *rollbackDue
	ttlLowered bool
	// ttlTouched is set once lowering the TTL began.
	ttlTouched bool
	// retireChecked is set once the retire check journaled its verdict.
	retireChecked bool
	// released is set once the weights were released after the end (the runner let go of
	// the ALB lever's authority tags, or `cutover release` ran).
	released bool
	promoted bool
	// skipGates is set by a promote --skip-gates (by skipGatesBy).
	skipGates   bool
	skipGatesBy string
	// paused is set when the last pause was not followed by resume or promote: a runner
	// resumed after a crash stays paused, as the operator left it.
	paused    bool
	pausedAt  time.Time
	pausedFor time.Duration
	// pauseWhy is set when drift paused it: what was found.
	pauseWhy string
	// seen are the ids of the control commands journaled.
	seen map[string]bool
	done string
	// lastSent are the weights of the last write intent journaled (nil when none).
	lastSent map[string]int64
}

// outcomeErr is what Run returns for a cutover that has ended.
func (st state) outcomeErr() error {
	if st.done == outcomeRolledBack && st.rollback != nil {
		return st.rollback.err()
	}
	return nil
}

// replay folds the journal into a state. Intents without a later pass are redone: the
// weights they write are absolute, so writing them twice is harmless.
func replay(entries []journal.Entry) state {
	st := state{seen: map[string]bool{}}
	for _, e := range entries {
		switch e.Kind {
		case kindStart:
			st.started, st.start, st.startedAt, st.startTTL, st.planHash, st.token = true, e.Weights, e.Time, e.TTL, e.PlanHash, e.Token
			d := readStartData(e.Data)
			st.startTTLs, st.selected = d.records(), d.Selected
		case kindTTLLowered:
			st.ttlLowered = true
		case kindRetire:
			st.retireChecked = true
		case kindIntent:
			if e.Step == stepTTLLower {
				st.ttlTouched = true
			}
			if e.Weights != nil {
				st.lastSent = e.Weights
			}
		case kindStepPassed:
			if st.rollback == nil {
				st.next = e.Step + 1
			}
		case kindStepFailed:
			// A failed step is followed by its rollback: a crash in between must not
			// make a resume run the step again.
			if st.rollback == nil {
				st.rollback = &rollbackDue{step: e.Step, reason: e.Detail}
			}
		case kindRollback:
			if st.rollback == nil {
				st.rollback = &rollbackDue{step: e.Step, reason: e.Detail}
			}
			st.rollback.begun = true
			_ = json.Unmarshal(e.Data, &st.rollback.stops)
		case kindRollbackHeld:
			if st.rollback != nil {
				st.rollback.from = e.Step + 1
			}
		case kindDrift:
			// A drift pause holds like a pause command, until resume, promote or abort.
			var d driftData
			_ = json.Unmarshal(e.Data, &d)
			if d.Action == spec.DriftPause && st.rollback == nil {
				if !st.paused {
					st.paused, st.pausedAt = true, e.Time
				}
				st.pauseWhy = driftPaused(e.Detail)
			}
		case kindControl:
			if e.ID != "" {
				st.seen[e.ID] = true
			}
			// After an abort (st.rollback is set) nothing else acts: an abort is final.
			if st.rollback != nil || notActedOn(e.Detail) {
				continue
			}
			if st.paused && e.Detail != CommandPause {
				st.paused, st.pausedFor, st.pauseWhy = false, st.pausedFor+e.Time.Sub(st.pausedAt), ""
			}
			switch e.Detail {
			case CommandPromote:
				st.promoted = true
			case promoteSkipGates:
				st.promoted, st.skipGates, st.skipGatesBy = true, true, e.By
			case CommandPause:
				if !st.paused {
					st.paused, st.pausedAt = true, e.Time
				}
			case CommandAbort:
				st.rollback = abortDue(st.next, e.By)
			}
		case kindDone:
			st.done = e.Detail
		case kindReleased:
			st.released = st.done != ""
		}
	}
	return st
}

// Abort rolls back a cutover that no runner holds: one interrupted before it finished.
// (A running cutover is aborted through SendCommand; its runner rolls back.) It returns
// nil once rolled back, and *journal.LockedError when a runner holds the cutover.
func Abort(ctx context.Context, cfg Config) (*Report, error) {
	store := cfg.journalStore(cfg.Plan.Name)
	if entries, torn, err := store.Read(); errors.Is(err, os.ErrNotExist) {
		if err := store.Held(); err != nil {
			return nil, err
		}
		// CheckCommandable, on the journal as just read.
		_, err = commandable(cfg.Plan.Name, store.Where(), CommandAbort, entries, torn, err)
		return nil, err
	}
	r, entries, err := open(cfg)
	if err != nil {
		return nil, err
	}
	defer r.close()
	// The one check of every control command, on the journal as read under the lock.
	st, err := commandable(r.p.Name, r.store.Where(), CommandAbort, entries, r.cut, nil)
	switch {
	case err != nil && st.done != "":
		return BuildReport(r.p.Name, entries), err
	case err != nil:
		return nil, err
	}
	if h := planHash(r.p); st.planHash != "" && st.planHash != h {
		// An abort must work in an emergency; the starting weights come from the journal.
		r.log.Warn("the plan changed since the cutover started; rolling back to the journal's starting weights", "plan", h, "journal", st.planHash)
	}
	due := st.rollback
	if due == nil {
		if _, err := r.append(journal.Entry{Kind: kindControl, Step: stepNone, Detail: CommandAbort}); err != nil {
			return nil, err
		}
		due = abortDue(st.next, cfg.By)
	}
	r.restore(st)
	// An abort is the emergency exit, and may be run from another machine than the one
	// that ran the cutover (with its journal): it takes the weights over from whichever
	// runner of this cutover holds them, replacing that runner's authority record
	// compare-and-swap-wise, and journals that it did. That runner, if alive, stops at
	// its next write, refused by the record it no longer holds.
	r.id, r.takeover = thisRunner(st.token), true
	if err := r.fixSelection(ctx, st); err != nil {
		return nil, err
	}
	if err := r.prepare(ctx, st, true); err != nil {
		return nil, err
	}
	err = r.rollback(ctx, due)
	return r.finish(err)
}

// driftData is what a drift entry keeps: the members that moved, and what the runner
// did (spec.DriftPause or spec.DriftRollback).
type driftData struct {
	Action  string  `json:"action"`
	Members []Drift `json:"members"`
}

// formatRunners renders runners for messages: "runner T@H:P, runner …".
func formatRunners(rs []registry.Runner) string {
	var parts []string
	for _, r := range rs {
		if r.Token == "" {
			parts = append(parts, "a runner that records no token")
			continue
		}
		parts = append(parts, "runner "+r.String())
	}
	return strings.Join(slices.Compact(parts), ", ")
}

// newToken returns a fresh runner token: 64 random bits in hex, enough that two runs
// never draw the same.
func newToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// thisRunner is this process as the runner holding token.
func thisRunner(token string) registry.Runner {
	host, _ := os.Hostname()
	return registry.Runner{Token: token, Host: host, PID: os.Getpid()}
}

// startData is what a start entry keeps beyond its fields: each record's TTL, restored
// when the cutover ends (the journal's TTL is the largest, which the old TTL's wait and
// the hold's floor use).
type startData struct {
	// TTLs maps "name type" to the TTL the record's weighted sets had.
	TTLs map[string]int64 `json:"ttls,omitempty"`
	// Lever is the lever the cutover pulls; "" is LeverRoute53 (and every journal from
	// before the ALB lever).
	Lever string `json:"lever,omitempty"`
	// Rules are the ALB lever's rules as found: their forward actions' target groups.
	Rules []alb.RuleWeights `json:"rules,omitempty"`
	// Selected is what a plan that selects (spec.select, spec.alb.select) selected.
	Selected *Selection `json:"selected,omitempty"`
}

// readStartData reads a start entry's data; a journal from before it has none.
func readStartData(raw json.RawMessage) startData {
	var d startData
	if len(raw) > 0 {
		_ = json.Unmarshal(raw, &d)
	}
	return d
}

// records returns the TTLs by record, nil when none were kept.
func (d startData) records() map[spec.Record]int64 {
	if len(d.TTLs) == 0 {
		return nil
	}
	out := map[spec.Record]int64{}
	for k, t := range d.TTLs {
		name, typ, _ := strings.Cut(k, " ")
		out[spec.Record{Name: name, Type: typ}] = t
	}
	return out
}
