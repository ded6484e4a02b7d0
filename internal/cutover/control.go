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

// checkCommandable refuses a command for a cutover whose journal (at paths) shows no run
// that could act on it: a command left for a cutover that has not started would be acted
// on by whichever run starts next (a stale promote turning it into an instant flip), and
// one for a cutover that has ended by nobody.
func checkCommandable(paths Paths, command string) error {
	name := strings.TrimSuffix(filepath.Base(paths.Journal), ".journal")
	refused := func(why string, a ...any) error {
		return &CommandRefusedError{Cutover: name, Command: command, Why: fmt.Sprintf(why, a...)}
	}
	entries, torn, err := journal.ReadTail(paths.Journal)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return refused("it has not started here: no journal at %s", paths.Journal)
	case err != nil:
		// A damaged journal is for a person to look at, not to be taken for "never ran".
		return refused("its journal is damaged: %v", err)
	}
	st := replay(entries)
	switch {
	case !st.started && torn > 0:
		return refused("it has not started: its journal %s has no start entry, only a torn line of %d bytes (a crash mid-write); `crossfade cutover run --resume` starts it", paths.Journal, torn)
	case !st.started:
		return refused("it has not started: its journal %s has no start entry (the run stopped before it moved anything); `crossfade cutover run` starts it", paths.Journal)
	case st.done != "":
		return refused("it has ended (%s)", st.done)
	}
	return nil
}

// SendCommand leaves c in the cutover's control directory for its runner, which acts on it
// at its next check (or, when none runs, the next `run --resume` does). It refuses
// (*CommandRefusedError) a cutover that has not started or has ended. Each command is a
// file of its own, written under a temporary name and renamed: the runner sees whole
// commands only, and concurrent senders cannot lose each other's.
func SendCommand(paths Paths, c Command) error {
	switch c.Command {
	case CommandPause, CommandResume, CommandPromote, CommandAbort:
	default:
		return fmt.Errorf("control command %q: want pause, resume, promote or abort", c.Command)
	}
	if c.SkipGates && c.Command != CommandPromote {
		return fmt.Errorf("control command %s: skipGates is for promote only", c.Command)
	}
	// The time is taken before the journal is looked at: a command that passes the check
	// just as the cutover ends, and lands after another run of it started, is older than
	// that run's start entry, and that run discards it (poll).
	if c.At.IsZero() {
		c.At = time.Now().UTC()
	}
	if err := checkCommandable(paths, c.Command); err != nil {
		return err
	}
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	// Names sort in the order the commands were sent.
	c.ID = fmt.Sprintf("%020d-%d-%s", c.At.UnixNano(), os.Getpid(), hex.EncodeToString(nonce[:]))
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := mkdirDurable(paths.Control); err != nil {
		return fmt.Errorf("control %s: %w", paths.Control, err)
	}
	// The temporary name starts with a dot: readCommands skips it.
	if err := writeFileAtomic(filepath.Join(paths.Control, ".tmp-"+c.ID), filepath.Join(paths.Control, c.ID+".json"), data); err != nil {
		return fmt.Errorf("control %s: %w", paths.Control, err)
	}
	return nil
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
		if err := json.Unmarshal(data, &c); err != nil || c.ID != strings.TrimSuffix(name, ".json") {
			errs = append(errs, fmt.Errorf("control %s: not a command file: %v", filepath.Join(dir, name), err))
			continue
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.ID, b.ID) })
	return out, errs
}

// Suffixes of a journaled command that was not acted on: one that came during a rollback,
// after an abort (an abort is final for the run), or before the run started (left from
// an earlier run, or sent as it ended).
const (
	ignoredSuffix   = " ignored: rolling back"
	abortedSuffix   = " ignored: aborted"
	discardedSuffix = " discarded: sent before this run started"
)

// notActedOn reports whether a journaled control command's detail says it was not acted on.
func notActedOn(detail string) bool {
	return strings.HasSuffix(detail, ignoredSuffix) || strings.HasSuffix(detail, abortedSuffix) || strings.HasSuffix(detail, discardedSuffix)
}

// discardStale removes the commands waiting for a run that is starting afresh: none was
// sent to it (SendCommand refuses a cutover that has not started), so each is left from
// before (a promote sent as the last run ended), and acting on it would skip steps nobody
// asked this run to skip. They are logged, and journaled once the start entry is.
func (r *runner) discardStale() {
	cmds, _ := readCommands(r.paths.Control)
	for _, c := range cmds {
		file := filepath.Join(r.paths.Control, c.ID+".json")
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.log.Error("remove a stale control command", "file", file, "err", err)
		}
		r.log.Warn("discarded a control command sent before this run started", "command", c.detail(), "by", c.By, "sent", c.At)
		r.discarded = append(r.discarded, c)
	}
}

// journalDiscarded journals the commands discardStale removed, after the start entry.
func (r *runner) journalDiscarded() error {
	for _, c := range r.discarded {
		if _, err := r.append(journal.Entry{Kind: kindControl, Step: stepNone, By: c.By, Detail: c.detail() + discardedSuffix, ID: c.ID}); err != nil {
			return err
		}
		r.seen[c.ID] = true
	}
	r.discarded = nil
	return nil
}

// clearCommands removes the commands left for a cutover that has ended: none of them can
// be acted on any more.
func clearCommands(paths Paths) error {
	cmds, _ := readCommands(paths.Control)
	var errs []error
	for _, c := range cmds {
		if err := os.Remove(filepath.Join(paths.Control, c.ID+".json")); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// poll takes the waiting commands: each is journaled before its file is removed (a crash
// in between finds the id in the journal and does not act twice) and then applied to the
// runner's state. Commands that cannot apply now are journaled as not acted on: any
// during a rollback, any after an abort (an abort is final: a later pause, resume or
// promote neither undoes nor delays it), and any sent before the run started.
func (r *runner) poll() error {
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
		stale := !r.startedAt.IsZero() && c.At.Before(r.startedAt)
		switch {
		case stale:
			detail += discardedSuffix
		case r.rollingBack:
			detail += ignoredSuffix
		case r.aborted:
			detail += abortedSuffix
		}
		if _, err := r.append(journal.Entry{Kind: kindControl, Step: -1, By: c.By, Detail: detail, ID: c.ID}); err != nil {
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
