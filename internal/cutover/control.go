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
}

// SendCommand leaves c in the cutover's control directory for its runner, which acts on it
// at its next check (or, when none runs, the next `run --resume` does). Each command is a
// file of its own, written under a temporary name and renamed: the runner sees whole
// commands only, and concurrent senders cannot lose each other's.
func SendCommand(paths Paths, c Command) error {
	switch c.Command {
	case CommandPause, CommandResume, CommandPromote, CommandAbort:
	default:
		return fmt.Errorf("control command %q: want pause, resume, promote or abort", c.Command)
	}
	if c.At.IsZero() {
		c.At = time.Now().UTC()
	}
	var nonce [4]byte
	_, _ = rand.Read(nonce[:])
	// Names sort in the order the commands were sent.
	c.ID = fmt.Sprintf("%020d-%d-%s", c.At.UnixNano(), os.Getpid(), hex.EncodeToString(nonce[:]))
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(paths.Control, 0o755); err != nil {
		return fmt.Errorf("control %s: %w", paths.Control, err)
	}
	// The temporary name starts with a dot: readCommands skips it.
	if err := writeFileAtomic(filepath.Join(paths.Control, ".tmp-"+c.ID), filepath.Join(paths.Control, c.ID+".json"), data); err != nil {
		return fmt.Errorf("control %s: %w", paths.Control, err)
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

// ignoredSuffix marks a journaled command that came during a rollback.
const ignoredSuffix = " ignored: rolling back"

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
// runner's state. Commands that cannot apply now (any during a rollback) are journaled
// as ignored.
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
		detail := c.Command
		if r.rollingBack {
			detail += ignoredSuffix
		}
		if _, err := r.append(journal.Entry{Kind: kindControl, Step: -1, By: c.By, Detail: detail, ID: c.ID}); err != nil {
			return err
		}
		r.seen[c.ID] = true
		if err := os.Remove(file); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.log.Error("remove control command", "file", file, "err", err)
		}
		r.log.Info("control command", "command", c.Command, "by", c.By)
		if r.rollingBack {
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
// while paused: the weights stay as they are.
func (r *runner) waitResume(ctx context.Context, step int, w map[string]int64) error {
	if !r.paused {
		return nil
	}
	msg := "paused: crossfade cutover resume to go on"
	if r.pauseWhy != "" {
		msg = r.pauseWhy
	}
	r.cfg.Progress.Event(Event{Phase: PhasePaused, Step: step, Total: len(r.p.Steps), Weights: w, Message: msg})
	for r.paused {
		if err := sleep(ctx, r.cfg.CheckInterval); err != nil {
			return err
		}
		if err := r.poll(); err != nil {
			return err
		}
	}
	return nil
}
