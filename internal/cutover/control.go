package cutover

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/crossfade-io/crossfade/internal/atomicfile"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// Control commands another process sends a running cutover.
const (
	CommandPause   = "pause"
	CommandResume  = "resume"
	CommandPromote = "promote"
	CommandAbort   = "abort"
)

// Command is one control request, as `crossfade cutover pause|resume|promote|abort` writes it.
type Command struct {
	// ID names the command's file; the journal keeps it so that a command is acted on once.
	ID      string    `json:"id"`
	Command string    `json:"command"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
	// SkipGates, on a promote, skips the gates too (`promote --skip-gates`): the steps
	// left pass without measurement. Journaled, and flagged in the report and dashboard.
	SkipGates bool `json:"skipGates,omitempty"`
	// Started is the time of the start entry of the run the sender checked the command
	// against (SendCommand sets it): a runner acts only on commands for its own run, and
	// discards, journaled, one stamped for another (earlier) run or not stamped at all.
	Started time.Time `json:"started,omitzero"`
}

// controlData is what a control entry keeps beyond its detail: when the command was
// sent, and for which run (its Started), so that the report shows when a command was
// sent, not only when a runner read it.
type controlData struct {
	SentAt  time.Time `json:"sentAt,omitzero"`
	Started time.Time `json:"started,omitzero"`
}

// entry is the control entry that journals c with detail.
func (c Command) entry(detail string) journal.Entry {
	data, _ := json.Marshal(controlData{SentAt: c.At, Started: c.Started})
	return journal.Entry{Kind: kindControl, Step: stepNone, By: c.By, Detail: detail, ID: c.ID, Data: data}
}

// sentAt is when the command a control entry journals was sent; zero when the entry does
// not say (journals from before it was kept, an abort run without a runner).
func sentAt(e journal.Entry) time.Time {
	var d controlData
	if len(e.Data) > 0 {
		_ = json.Unmarshal(e.Data, &d)
	}
	return d.SentAt
}

// CommandRefusedError is a control command refused because no run of the cutover can act
// on it: it has not started (no journal, or one without a start entry: the run stopped
// before it moved anything), or it has ended.
type CommandRefusedError struct {
	Cutover, Command string
	// Why says what the journal shows, and what to do instead.
	Why string
}

// Error names the cutover, the command and why it was refused.
func (e *CommandRefusedError) Error() string {
	return fmt.Sprintf("cutover %s: %s refused: %s", e.Cutover, e.Command, e.Why)
}

// promoteSkipGates is how the journal names a promote with SkipGates.
const promoteSkipGates = CommandPromote + " --skip-gates"

// detail is how the journal names c.
func (c Command) detail() string {
	if c.Command == CommandPromote && c.SkipGates {
		return promoteSkipGates
	}
	return c.Command
}

// CheckCommandable refuses (*CommandRefusedError) a command for a cutover whose journal
// (at paths) shows no run that could act on it: a command left for a cutover that has not
// started would be acted on by whichever run starts next (a stale promote turning it into
// an instant flip), and one for a cutover that has ended by nobody. It is the one check
// behind SendCommand, Abort and the CLI's control commands.
func CheckCommandable(paths Paths, command string) error {
	_, err := checkCommandable(paths, command)
	return err
}

// checkCommandable is CheckCommandable, also returning the state the journal shows.
func checkCommandable(paths Paths, command string) (state, error) {
	store := paths.store()
	entries, torn, err := store.Read()
	return commandable(strings.TrimSuffix(filepath.Base(paths.Journal), ".journal"), store.Where(), command, entries, torn, err)
}

// commandable judges a command for the cutover name whose journal (where, as its store
// names it) read as entries, with a torn tail of torn bytes, or failed with readErr.
func commandable(name, where, command string, entries []journal.Entry, torn int64, readErr error) (state, error) {
	refused := func(why string, a ...any) error {
		return &CommandRefusedError{Cutover: name, Command: command, Why: fmt.Sprintf(why, a...)}
	}
	switch {
	case errors.Is(readErr, os.ErrNotExist):
		return state{}, refused("it has not run here: no journal at %s (is --state-dir the one its run used?)", where)
	case readErr != nil:
		// A damaged journal is for a person to look at, not to be taken for "never ran".
		return state{}, refused("its journal is damaged: %v", readErr)
	}
	st := replay(entries)
	switch {
	case !st.started && torn > 0:
		return st, refused("it has not started: its journal %s has no start entry, only a torn line of %d bytes (a crash mid-write); `crossfade cutover run --resume` starts it", where, torn)
	case !st.started:
		return st, refused("it has not started: its journal %s has no start entry (the run stopped before it moved anything); `crossfade cutover run` starts it", where)
	case st.done != "":
		return st, refused("it has ended (%s)", st.done)
	}
	return st, nil
}

// SendCommand leaves c in the cutover's control directory for its runner, which acts on it
// at its next check (or, when none runs, the next `run --resume` does). It refuses
// (*CommandRefusedError) a cutover that has not started or has ended. Each command is a
// file of its own, written under a temporary name and renamed: the runner sees whole
// commands only, and concurrent senders cannot lose each other's.
func SendCommand(paths Paths, c Command) error {
	_, err := Send(paths, c)
	return err
}

// Send is SendCommand, returning the command as sent: with its ID (for WaitAck), its
// time and the run it is for.
func Send(paths Paths, c Command) (Command, error) {
	return SendTo(paths.store(), paths, c)
}

// SendTo is Send for a cutover whose journal is kept in store rather than in the journal
// file under paths (a Cutover object's status): the command is judged against that
// journal, and left, as Send leaves it, in paths.Control. A c.ID set by the caller is
// kept (the ID a Cutover's command annotation carries, which its sender waits for in
// the journal); an empty one is made up.
func SendTo(store journal.Store, paths Paths, c Command) (Command, error) {
	switch c.Command {
	case CommandPause, CommandResume, CommandPromote, CommandAbort:
	default:
		return Command{}, fmt.Errorf("control command %q: want pause, resume, promote or abort", c.Command)
	}
	if c.SkipGates && c.Command != CommandPromote {
		return Command{}, fmt.Errorf("control command %s: skipGates is for promote only", c.Command)
	}
	if c.ID != "" && (strings.HasPrefix(c.ID, ".") || strings.ContainsAny(c.ID, `/\`) || filepath.Base(c.ID) != c.ID) {
		// A sender's own ID (a Cutover object's command annotation) names the file: one
		// that is not a plain file name would land elsewhere, or be skipped as temporary.
		return Command{}, fmt.Errorf("control command %s: id %q: want a plain file name, not starting with '.'", c.Command, c.ID)
	}
	if c.At.IsZero() {
		c.At = time.Now().UTC()
	}
	entries, torn, err := store.Read()
	st, err := commandable(strings.TrimSuffix(filepath.Base(paths.Journal), ".journal"), store.Where(), c.Command, entries, torn, err)
	if err != nil {
		return Command{}, err
	}
	// Stamped with the run it was checked against: a command that passes the check just
	// as the cutover ends, and lands after another run of it started, is for the run
	// before, and that run discards it (poll), whenever its start entry was written.
	c.Started = st.startedAt
	if c.ID == "" {
		var nonce [4]byte
		_, _ = rand.Read(nonce[:])
		// Names sort in the order the commands were sent.
		c.ID = fmt.Sprintf("%020d-%d-%s", c.At.UnixNano(), os.Getpid(), hex.EncodeToString(nonce[:]))
	}
	data, err := json.Marshal(c)
	if err != nil {
		return Command{}, err
	}
	if err := mkdirDurable(paths.Control); err != nil {
		return Command{}, fmt.Errorf("control %s: %w", paths.Control, err)
	}
	// The temporary name starts with a dot: readCommands skips it.
	if err := writeFileAtomic(filepath.Join(paths.Control, ".tmp-"+c.ID), filepath.Join(paths.Control, c.ID+".json"), data); err != nil {
		return Command{}, fmt.Errorf("control %s: %w", paths.Control, err)
	}
	return c, nil
}

// syncDir fsyncs a directory (a variable: tests see it called).
var syncDir = atomicfile.SyncDir

// mkdirDurable creates dir and its missing parents, as os.MkdirAll does, and fsyncs the
// parent of each directory it created, deepest first: a directory's entry is in its
// parent, and a command written into a directory whose own entry a power loss undoes
// would be lost with it (the command file's write syncs dir itself, not dir's name).
func mkdirDurable(dir string) error {
	var created []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		_, err := os.Stat(d)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrNotExist) {
			return err
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range created {
		if err := syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

// readCommands returns the commands waiting in dir, oldest first. A file that does not
// parse is reported and left for a person to look at.
func readCommands(dir string) ([]Command, []error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, []error{fmt.Errorf("control %s: %w", dir, err)}
	}
	var out []Command
	var errs []error
	for _, de := range des {
		name := de.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			errs = append(errs, fmt.Errorf("control %s: %w", name, err))
			continue
		}
		var c Command
		if err := json.Unmarshal(data, &c); err != nil {
			errs = append(errs, fmt.Errorf("control %s: not a command file: %v", filepath.Join(dir, name), err))
			continue
		}
		if want := strings.TrimSuffix(name, ".json"); c.ID != want {
			errs = append(errs, fmt.Errorf("control %s: not a command file: its id is %q, not %q, the file's name", filepath.Join(dir, name), c.ID, want))
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.ID, b.ID) })
	return out, errs
}

// Suffixes of a journaled command that was not acted on: one that came during a rollback,
// after an abort (an abort is final for the run), or for another run (left from an
// earlier run, or sent as it ended). endedInfix marks one still waiting when the cutover
// ended, followed by the outcome: "pause ignored: the cutover had ended (completed)".
const (
	ignoredSuffix   = " ignored: rolling back"
	abortedSuffix   = " ignored: aborted"
	discardedSuffix = " discarded: sent before this run started"
	endedInfix      = " ignored: the cutover had ended"
)

// notActedOn reports whether a journaled control command's detail says it was not acted on.
func notActedOn(detail string) bool {
	return strings.HasSuffix(detail, ignoredSuffix) || strings.HasSuffix(detail, abortedSuffix) || strings.HasSuffix(detail, discardedSuffix) ||
		strings.Contains(detail, endedInfix)
}

// closeCommands journals each command still waiting when the cutover ended (outcome) as
// ignored, then removes exactly those: a command its sender was told a runner would act
// on never disappears without a trace. A command that lands after this ran finds the
// cutover ended: its sender (WaitAck) says so.
func (r *runner) closeCommands(outcome string) error {
	cmds, errs := readCommands(r.paths.Control)
	for _, err := range errs {
		r.log.Error("control command", "err", err)
	}
	for _, c := range cmds {
		file := filepath.Join(r.paths.Control, c.ID+".json")
		if !r.seen[c.ID] {
			detail := fmt.Sprintf("%s%s (%s)", c.detail(), endedInfix, outcome)
			if _, err := r.append(c.entry(detail)); err != nil {
				return err
			}
			r.seen[c.ID] = true
			r.log.Warn("control command", "command", detail, "by", c.By)
		}
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.log.Error("remove control command", "file", file, "err", err)
		}
	}
	return nil
}

// poll takes the waiting commands: each is journaled before its file is removed (a crash
// in between finds the id in the journal and does not act twice) and then applied to the
// runner's state. Commands that cannot apply now are journaled as not acted on: any
// during a rollback, any after an abort (an abort is final: a later pause, resume or
// promote neither undoes nor delays it), and any not sent to this run (stamped for
// another start entry, or not stamped): left from before, acting on one would skip steps
// nobody asked this run to skip. Before the run's start entry it takes nothing: a run
// that fails to start leaves them for the next, which discards them, journaled.
func (r *runner) poll() error {
	if r.startedAt.IsZero() {
		return nil
	}
	cmds, errs := readCommands(r.paths.Control)
	for _, err := range errs {
		r.log.Error("control command", "err", err)
	}
	for _, c := range cmds {
		file := filepath.Join(r.paths.Control, c.ID+".json")
		if r.seen[c.ID] {
			os.Remove(file)
			continue
		}
		detail := c.detail()
		stale := !c.Started.Equal(r.startedAt)
		switch {
		case stale:
			detail += discardedSuffix
		case r.rollingBack:
			detail += ignoredSuffix
		case r.aborted:
			detail += abortedSuffix
		}
		if _, err := r.append(c.entry(detail)); err != nil {
			return err
		}
		r.seen[c.ID] = true
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.log.Error("remove control command", "file", file, "err", err)
		}
		r.log.Info("control command", "command", detail, "by", c.By)
		if stale || r.rollingBack || r.aborted {
			continue
		}
		switch c.Command {
		case CommandPause:
			if !r.paused {
				r.paused, r.pausedAt = true, time.Now()
			}
		case CommandResume:
			r.unpause()
		case CommandPromote:
			r.promoted = true
			if c.SkipGates {
				r.skipGates, r.skipGatesBy = true, c.By
			}
			r.unpause()
		case CommandAbort:
			r.aborted, r.abortedBy = true, c.By
			r.unpause()
		}
	}
	return nil
}

// unpause ends a pause, counting its length out of the total time limit.
func (r *runner) unpause() {
	if r.paused {
		r.pausedFor += time.Since(r.pausedAt)
	}
	r.paused, r.pauseWhy = false, ""
}

// waitResume holds while paused, until resume, promote or abort. Gates are not checked
// while paused: the weights stay as they are. An abort ends it whatever came with it.
func (r *runner) waitResume(ctx context.Context, step int, w map[string]int64) error {
	if !r.paused || r.aborted {
		return nil
	}
	msg := "paused: crossfade cutover resume to go on"
	if r.pauseWhy != "" {
		msg = r.pauseWhy
	}
	r.cfg.Progress.Event(Event{Phase: PhasePaused, Step: step, Total: len(r.p.Steps), Weights: w, Message: msg})
	for r.paused && !r.aborted {
		if err := sleep(ctx, r.cfg.CheckInterval); err != nil {
			return err
		}
		if err := r.poll(); err != nil {
			return err
		}
	}
	return nil
}

// AckState is what became of a command sent to a running cutover (WaitAck).
type AckState int

// What WaitAck found.
const (
	// AckActedOn: the runner journaled the command and acted on it (an abort that found
	// the cutover rolling back, or rolled back, counts: traffic goes, or went, back).
	AckActedOn AckState = iota
	// AckIgnored: the runner journaled it as not acted on (Ack.Why says why), or the
	// cutover ended before any runner read it.
	AckIgnored
	// AckTimedOut: no runner journaled it in time; it stays queued for the next check.
	AckTimedOut
	// AckNoRunner: no runner holds the cutover any more and none journaled it; it stays
	// queued for `run --resume`.
	AckNoRunner
)

// Ack is what the journal says a runner did with a command.
type Ack struct {
	State AckState
	// Detail is the command's journal entry's detail ("" when not journaled).
	Detail string
	// At is when it was journaled (zero when it was not).
	At time.Time
	// Why says, for a command not acted on, why: the journal's reason.
	Why string
}

// ackPoll is how often WaitAck reads the journal.
const ackPoll = 200 * time.Millisecond

// WaitAck waits, for at most timeout, until the journal at paths says what a runner did
// with c (sent by Send): acted on, or not (and why). It also ends, with the state found,
// when no runner holds the cutover any more, and when the cutover has ended without
// journaling c: then c's file is removed (no run will read it) and it counts as ignored.
func WaitAck(ctx context.Context, paths Paths, c Command, timeout time.Duration) (Ack, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		entries, _, err := paths.store().Read()
		if err != nil {
			return Ack{}, err
		}
		if a, ok := ackIn(entries, c); ok {
			return a, nil
		}
		held := paths.store().Held()
		var locked *journal.LockedError
		if held != nil && !errors.As(held, &locked) {
			return Ack{}, held
		}
		if held == nil {
			// The runner may have journaled c just before it let go: read once more.
			if entries, _, err = paths.store().Read(); err != nil {
				return Ack{}, err
			}
			if a, ok := ackIn(entries, c); ok {
				return a, nil
			}
			st := replay(entries)
			if st.done == "" {
				return Ack{State: AckNoRunner}, nil
			}
			// Ended, and its runner gone, without reading c: nobody will.
			if err := os.Remove(filepath.Join(paths.Control, c.ID+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
				return Ack{}, fmt.Errorf("control %s: %w", paths.Control, err)
			}
			return endedAck(c, st.done, fmt.Sprintf("the cutover had ended (%s) before its runner read it", st.done)), nil
		}
		select {
		case <-ctx.Done():
			if ctx.Err() == context.DeadlineExceeded {
				return Ack{State: AckTimedOut}, nil
			}
			return Ack{}, ctx.Err()
		case <-time.After(ackPoll):
		}
	}
}

// ackIn finds c's entry in a journal and says what the runner did with it.
func ackIn(entries []journal.Entry, c Command) (Ack, bool) {
	for _, e := range entries {
		if e.Kind != kindControl || e.ID != c.ID {
			continue
		}
		a := Ack{State: AckActedOn, Detail: e.Detail, At: e.Time}
		if !notActedOn(e.Detail) {
			return a, true
		}
		_, why, _ := strings.Cut(e.Detail, " ignored: ")
		if why == "" {
			_, why, _ = strings.Cut(e.Detail, " discarded: ")
		}
		st := replay(entries)
		switch {
		case c.Command == CommandAbort && strings.HasSuffix(e.Detail, abortedSuffix):
			// Another abort came first: the rollback it asks for is this one's.
			a.Why = "an abort before it is being acted on: rolling back"
		case c.Command == CommandAbort && strings.HasSuffix(e.Detail, ignoredSuffix):
			a.Why = "the cutover was already rolling back"
			if st.rollback != nil {
				a.Why += " (" + st.rollback.reason + ")"
			}
		case strings.Contains(e.Detail, endedInfix):
			ea := endedAck(c, st.done, why)
			ea.Detail, ea.At = e.Detail, e.Time
			return ea, true
		default:
			a.State, a.Why = AckIgnored, why
		}
		return a, true
	}
	return Ack{}, false
}

// endedAck is what became of c, still waiting when the cutover ended with outcome: ignored,
// but an abort of a cutover that rolled back got what it asked for.
func endedAck(c Command, outcome, why string) Ack {
	if c.Command == CommandAbort && outcome == outcomeRolledBack {
		return Ack{State: AckActedOn, Why: "the cutover had already rolled back"}
	}
	return Ack{State: AckIgnored, Why: why}
}
