package cutover

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
	Command string    `json:"command"`
	By      string    `json:"by"`
	At      time.Time `json:"at"`
}

// SendCommand appends a command to the cutover's control file for its runner to act on at
// its next check. O_APPEND keeps concurrent senders' lines whole.
func SendCommand(paths Paths, c Command) error {
	switch c.Command {
	case CommandPause, CommandResume, CommandPromote, CommandAbort:
	default:
		return fmt.Errorf("control command %q: want pause, resume, promote or abort", c.Command)
	}
	if c.At.IsZero() {
		c.At = time.Now().UTC()
	}
	line, err := json.Marshal(c)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(paths.Control, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("control %s: %w", paths.Control, err)
	}
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close())
}

// takeCommands moves the control file aside and returns its commands. The rename makes
// taking atomic: a command written meanwhile lands in a new file, read next time.
func takeCommands(path string) ([]Command, error) {
	taken := fmt.Sprintf("%s.taken.%d", path, os.Getpid())
	if err := os.Rename(path, taken); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("control %s: %w", path, err)
	}
	data, err := os.ReadFile(taken)
	os.Remove(taken)
	if err != nil {
		return nil, fmt.Errorf("control %s: %w", path, err)
	}
	var out []Command
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var c Command
		if json.Unmarshal(sc.Bytes(), &c) == nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// control returns the next command to act on, journaled, or nil.
func (r *runner) control() *Command {
	cmds, err := takeCommands(r.paths.Control)
	if err != nil {
		r.log.Error("read control commands", "err", err)
	}
	r.pending = append(r.pending, cmds...)
	if len(r.pending) == 0 {
		return nil
	}
	c := r.pending[0]
	r.pending = r.pending[1:]
	if _, err := r.j.Append(journal.Entry{Kind: kindControl, Step: -1, By: c.By, Detail: c.Command}); err != nil {
		r.log.Error("journal control command", "command", c.Command, "err", err)
	}
	r.log.Info("control command", "command", c.Command, "by", c.By)
	return &c
}

// waitResume holds a paused step until resume, promote or abort. Gates are not checked
// while paused: the weights stay as written, and the hold starts again on resume.
func (r *runner) waitResume(ctx context.Context, step int, w map[string]int64) error {
	r.cfg.Progress.Event(Event{Phase: PhasePaused, Step: step, Total: len(r.p.Steps), Weights: w, Message: "paused: crossfade cutover resume to go on"})
	for {
		if c := r.control(); c != nil {
			switch c.Command {
			case CommandResume:
				return nil
			case CommandPromote:
				r.promoted = true
				return nil
			case CommandAbort:
				r.aborted, r.abortedBy = true, c.By
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.cfg.CheckInterval):
		}
	}
}
