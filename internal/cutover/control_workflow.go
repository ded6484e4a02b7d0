package cutover

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// ControlConfig is what Control needs to send one control command to a cutover's runner.
type ControlConfig struct {
	// Command is CommandPause, CommandResume, CommandPromote or CommandAbort.
	Command string
	// Plan is the cutover's plan; only its name is used, except by an abort (Engine).
	Plan *spec.Plan
	// PlanFile is the plan's path, as the messages name it in the commands they suggest.
	PlanFile string
	// StateDir holds the cutover's journal, lock and control directory.
	StateDir string
	// By is who sends the command (user@host), for the journal's audit trail.
	By string
	// SkipGates, on a promote, skips the gates of the remaining steps too.
	SkipGates bool
	// AckTimeout is how long to wait for the runner to journal what it did with the
	// command; 0 does not wait.
	AckTimeout time.Duration
	// Engine is the engine's configuration, with which an abort rolls back here when no
	// runner holds the cutover; unused by the other commands.
	Engine Config
	// Out receives the progress messages (nil: discarded).
	Out io.Writer
}

// ControlError is a control command a runner did not act on (Ack.State AckIgnored), did
// not acknowledge in time (AckTimedOut), or stopped before reading (AckNoRunner). The
// command stays queued unless ignored.
type ControlError struct {
	// Cutover is the plan's name.
	Cutover string
	// What is the command as the messages name it ("promote --skip-gates").
	What string
	// PlanFile is the plan's path, named in the command the message suggests.
	PlanFile string
	// Ack is what the journal said about the command.
	Ack Ack
	// Timeout is how long Control waited for the acknowledgement.
	Timeout time.Duration
}

// Error says what became of the command, and what acts on it next when it stays queued.
func (e *ControlError) Error() string {
	switch e.Ack.State {
	case AckTimedOut:
		return fmt.Sprintf("cutover %s: %s not acknowledged within %s: it stays queued, its runner acts on it at its next check, and `crossfade cutover status %s` shows when",
			e.Cutover, e.What, e.Timeout, e.PlanFile)
	case AckNoRunner:
		return fmt.Sprintf("cutover %s: its runner stopped before it read the %s: the command stays queued, and `crossfade cutover run --resume %s` acts on it when it starts",
			e.Cutover, e.What, e.PlanFile)
	}
	return fmt.Sprintf("cutover %s: %s not acted on: %s", e.Cutover, e.What, e.Ack.Why)
}

// Control sends cfg.Command to the cutover's runner and waits (cfg.AckTimeout) for the
// runner to journal what it did with it: nil once acted on, *ControlError when not, and
// *CommandRefusedError (from Send) for a cutover no run can act on. A command for a
// cutover no runner holds is left for `run --resume`, except an abort: that rolls back
// here, as it does when the runner stops before reading it. rep is the report of a
// rollback done here (nil when none was), for the caller to show.
func Control(ctx context.Context, cfg ControlConfig) (rep *Report, err error) {
	out := cfg.Out
	if out == nil {
		out = io.Discard
	}
	abort := cfg.Command == CommandAbort
	switch {
	case cfg.Plan == nil:
		return nil, fmt.Errorf("cutover %s: no plan given (ControlConfig.Plan)", cfg.Command)
	case abort && cfg.Engine.Plan == nil:
		// An abort may roll back here: without the engine's configuration it could not.
		return nil, fmt.Errorf("cutover %s: abort: no engine configuration given (ControlConfig.Engine.Plan)", cfg.Plan.Name)
	case cfg.SkipGates && cfg.Command != CommandPromote:
		// Skipping gates is a promote's alone; said of another command it would be a
		// warning about something that does not happen.
		return nil, fmt.Errorf("cutover %s: %s: ControlConfig.SkipGates is for %s only", cfg.Plan.Name, cfg.Command, CommandPromote)
	}
	if abort {
		if rep, done, err := abortHere(ctx, cfg.Engine); done {
			return rep, err
		}
	}
	// pause, resume, promote (and abort of a running cutover) only leave a command: they
	// need the plan's name, not the zone.
	name := cfg.Plan.Name
	paths := PathsFor(cfg.StateDir, name)
	// Send refuses (naming why) a cutover that has not started (an empty journal too) or
	// has ended: a command left then would act on the next run.
	c, err := Send(paths, Command{Command: cfg.Command, By: cfg.By, SkipGates: cfg.SkipGates})
	if err != nil {
		return nil, err
	}
	what := c.Command
	if cfg.SkipGates {
		what = "promote --skip-gates"
		fmt.Fprintf(out, "WARNING: promote --skip-gates: the remaining steps of cutover %s pass without their gates (unmeasured)\n", name)
	}
	for {
		var locked *journal.LockedError
		switch err := journal.Held(paths.Lock); {
		case errors.As(err, &locked):
		case err != nil:
			return nil, err
		case abort:
			// The runner stopped after Abort found it holding the cutover: nobody would
			// act on the abort until a resume, so roll back here.
			fmt.Fprintf(out, "abort of cutover %s: its runner has stopped; rolling back here\n", name)
			if rep, done, err := abortHere(ctx, cfg.Engine); done {
				return rep, err
			}
			continue // a runner took it again meanwhile: wait for it
		default:
			fmt.Fprintf(out, "%s left for cutover %s, which no runner holds now: `crossfade cutover run --resume %s` acts on it when it starts\n", what, name, cfg.PlanFile)
			return nil, nil
		}
		if again, err := waitRunner(ctx, out, cfg, paths, c, what, locked.Holder); !again {
			return nil, err
		}
		// An abort whose runner stopped before reading it: rolled back here, above.
	}
}

// waitRunner waits for the runner holder to journal what it did with c, and says so on
// out. again is true for an abort whose runner stopped before reading it: Control then
// rolls back itself.
func waitRunner(ctx context.Context, out io.Writer, cfg ControlConfig, paths Paths, c Command, what string, holder journal.Holder) (again bool, err error) {
	name := cfg.Plan.Name
	runner := fmt.Sprintf("%s, pid %d", holder.By, holder.PID)
	if cfg.AckTimeout == 0 {
		fmt.Fprintf(out, "%s sent to cutover %s; its runner (%s) acts on it at its next check; not waiting (--ack-timeout 0): `crossfade cutover status %s` shows when\n", what, name, runner, cfg.PlanFile)
		return false, nil
	}
	fmt.Fprintf(out, "%s sent to cutover %s; waiting up to %s for its runner (%s) to act on it\n", what, name, cfg.AckTimeout, runner)
	ack, err := WaitAck(ctx, paths, c, cfg.AckTimeout)
	if err != nil {
		return false, err
	}
	switch ack.State {
	case AckActedOn:
		if ack.Why != "" {
			fmt.Fprintf(out, "cutover %s: %s: %s\n", name, what, ack.Why)
		} else {
			fmt.Fprintf(out, "cutover %s: %s acted on by its runner at %s\n", name, what, ack.At.Format(time.RFC3339))
		}
		return false, nil
	case AckNoRunner:
		if cfg.Command == CommandAbort {
			return true, nil
		}
	}
	return false, &ControlError{Cutover: name, What: what, PlanFile: cfg.PlanFile, Ack: ack, Timeout: cfg.AckTimeout}
}

// abortHere rolls back a cutover no runner holds (Abort). done is false when a runner
// holds it: the abort is then sent to it as a command.
func abortHere(ctx context.Context, cfg Config) (rep *Report, done bool, err error) {
	rep, err = Abort(ctx, cfg)
	var locked *journal.LockedError
	if errors.As(err, &locked) {
		return nil, false, nil
	}
	return rep, true, err
}
