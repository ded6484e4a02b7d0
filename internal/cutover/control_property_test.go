package cutover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// TestControlCommandsProperty drives the real runner (a fakeLever, a scripted gate) with
// random interleavings of pause, resume, promote and abort with its checks (each gate
// check, each write and each progress event, from the first to the end's, is a point
// where commands may arrive; some runs lower the TTL, so that commands arrive during its
// restore too), and holds the journal and the outcome to a small model of what the
// commands mean:
//   - every command SendCommand accepted is journaled by the time Run returns: acted on,
//     or not and why (one still waiting when the cutover ends: "ignored: the cutover had
//     ended"); none vanishes;
//   - an abort is final: the run rolls back to the start, every command after it is
//     journaled as ignored, no forward write follows it, and it never waits in a pause;
//   - a pause holds the weights: no forward write while paused;
//   - promote skips pauses only: no step before the last is written after it, and every
//     step that passes (promoted or not) passed on a judged gate result, never pending;
//   - without an abort the cutover completes at the last step's weights.
//
// The seed of a failing iteration is reported; CONTROL_SEED-style reruns use it as base.
func TestControlCommandsProperty(t *testing.T) {
	iterations := 150
	if testing.Short() {
		iterations = 30
	}
	const base = 20260125
	for it := range iterations {
		seed := uint64(base + it)
		// A lowered TTL makes a run last seconds (its old TTL is waited out, its steps
		// hold for the lowered one): a few runs only.
		if err := controlProperty(t, seed, it%50 == 0); err != nil {
			t.Fatalf("seed %d (iteration %d, TTL lowered %v): %v", seed, it, it%50 == 0, err)
		}
	}
}

// controlProperty runs one random interleaving (from seed) and checks it against the model;
// withTTL lowers the TTL before the first step (restored at the end).
func controlProperty(t *testing.T, seed uint64, withTTL bool) error {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	names := []string{CommandPause, CommandResume, CommandPromote, CommandAbort}
	// schedule: checkpoint → commands sent there, in order.
	schedule := map[int][]string{}
	for range rng.IntN(7) {
		at := rng.IntN(14)
		schedule[at] = append(schedule[at], names[rng.IntN(len(names))])
	}
	p := fakePlan(2*time.Millisecond, 20, 60, 100)
	lv := newFakeLever("blue", "green", 100, 0)
	if withTTL {
		p.LowerTTL, lv.ttl = 1, 2
		pauseEach(p, time.Second)
	}
	var (
		mu         sync.Mutex
		point      int
		paths      Paths
		violations []string
		sendErr    error
		unmeasured int
		// accepted are the ids of the commands SendCommand accepted.
		accepted []string
	)
	send := func(cmds []string) {
		for _, c := range cmds {
			sent, err := Send(paths, Command{Command: c, By: "prop"})
			var refused *CommandRefusedError
			switch {
			case err == nil:
				accepted = append(accepted, sent.ID)
			case errors.As(err, &refused) && strings.Contains(err.Error(), "it has ended"):
				// Sent after the end: refused, never accepted and lost.
			case sendErr == nil:
				sendErr = err
			}
		}
	}
	// at is a checkpoint of the runner: the commands scheduled there arrive now.
	at := func() {
		mu.Lock()
		defer mu.Unlock()
		send(schedule[point])
		delete(schedule, point)
		point++
	}
	g := &scriptGate{name: "g", next: func(gate.Step, int) gate.Result {
		at()
		mu.Lock()
		defer mu.Unlock()
		switch x := rng.IntN(10); {
		case x < 6 || unmeasured >= 3:
			unmeasured = 0
			return gate.Result{Pass: true, Detail: "measured"}
		case x < 8:
			unmeasured = 0
			return gate.Result{Pass: true, Pending: true, Detail: "too few requests"}
		default:
			unmeasured++
			return gate.Result{Err: "connection refused"}
		}
	}}
	cfg := fakeConfig(t, p, lv, g)
	paths = PathsFor(cfg.StateDir, p.Name)
	lv.onWrite = func(map[string]int64) { at() }
	lv.onTTL = func(map[spec.Record]int64) { at() }
	cfg.Progress = progressHook(func(e Event) {
		if e.Phase != PhasePaused {
			at()
			return
		}
		for _, en := range mustRead(t, paths.Journal) {
			if en.Kind == kindControl && en.Detail == CommandAbort {
				violations = append(violations, "paused after an abort was journaled")
			}
		}
		// Nothing checks while paused: the rest of the schedule arrives now, then a
		// resume, so that every run ends.
		mu.Lock()
		defer mu.Unlock()
		for k := point; len(schedule) > 0; k++ {
			send(schedule[k])
			delete(schedule, k)
		}
		send([]string{CommandResume})
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, runErr := Run(ctx, cfg, false)
	if sendErr != nil {
		return fmt.Errorf("send: %w", sendErr)
	}
	if len(violations) > 0 {
		return errors.New(strings.Join(violations, "; "))
	}
	entries, err := journal.Read(paths.Journal)
	if err != nil {
		return err
	}
	journaled := map[string]bool{}
	for _, e := range entries {
		if e.Kind != kindControl {
			continue
		}
		journaled[e.ID] = true
		// Every checkpoint here, the TTL's restore included, comes before the runner's
		// last look at the commands: none sent at one is left for the end to ignore.
		if strings.Contains(e.Detail, endedInfix) {
			return fmt.Errorf("%q: sent while the cutover ran, left unread until it ended", e.Detail)
		}
	}
	for _, id := range accepted {
		if !journaled[id] {
			return fmt.Errorf("command %s was accepted but never journaled (accepted %q)", id, accepted)
		}
	}
	return checkControlModel(entries, runErr, lv.weights(), len(p.Steps))
}

// checkControlModel holds a run's journal, error and final weights to the model.
func checkControlModel(entries []journal.Entry, runErr error, final map[string]int64, steps int) error {
	last := steps - 1
	var aborted, paused, promoted, rollingBack, ended bool
	var cmds []string
	for _, e := range entries {
		switch e.Kind {
		case kindDone:
			ended = true
		case kindControl:
			cmds = append(cmds, e.Detail)
			switch {
			case ended != strings.Contains(e.Detail, endedInfix):
				return fmt.Errorf("%q journaled %s the end (commands %q)", e.Detail, map[bool]string{true: "after", false: "before"}[ended], cmds)
			case ended:
				continue
			case aborted || rollingBack:
				if !strings.HasSuffix(e.Detail, abortedSuffix) && !strings.HasSuffix(e.Detail, ignoredSuffix) {
					return fmt.Errorf("%q journaled as acted on after the abort (commands %q)", e.Detail, cmds)
				}
				continue
			case notActedOn(e.Detail):
				return fmt.Errorf("%q journaled as not acted on before any abort (commands %q)", e.Detail, cmds)
			}
			switch e.Detail {
			case CommandPause:
				paused = true
			case CommandResume:
				paused = false
			case CommandPromote:
				promoted, paused = true, false
			case CommandAbort:
				aborted, paused = true, false
			}
		case kindRollback:
			rollingBack = true
		case kindIntent:
			switch {
			case e.Step < 0:
			case aborted || rollingBack:
				return fmt.Errorf("step %d written after the abort (commands %q)", e.Step+1, cmds)
			case paused:
				return fmt.Errorf("step %d written while paused (commands %q)", e.Step+1, cmds)
			case promoted && e.Step < last:
				return fmt.Errorf("step %d written after promote (commands %q)", e.Step+1, cmds)
			}
		case kindStepPassed:
			var rs []gate.Result
			_ = json.Unmarshal(e.Data, &rs)
			if len(rs) != 1 || !rs[0].Pass || rs[0].Pending {
				return fmt.Errorf("step %d passed on gate results %s, want one judged pass (commands %q)", e.Step+1, e.Data, cmds)
			}
		}
	}
	st := replay(entries)
	switch {
	case aborted:
		if !errors.Is(runErr, ErrAborted) || st.done != outcomeRolledBack {
			return fmt.Errorf("aborted: run %v, outcome %q; want rolled back (commands %q)", runErr, st.done, cmds)
		}
		if final["blue"] != 100 || final["green"] != 0 {
			return fmt.Errorf("aborted: weights %v, want the start (commands %q)", final, cmds)
		}
	default:
		if runErr != nil || st.done != outcomeCompleted {
			return fmt.Errorf("not aborted: run %v, outcome %q; want completed (commands %q)", runErr, st.done, cmds)
		}
		if final["green"] != 100 {
			return fmt.Errorf("completed at weights %v, want the last step's (commands %q)", final, cmds)
		}
		if st.next != steps {
			return fmt.Errorf("completed with step %d not passed (commands %q)", st.next+1, cmds)
		}
	}
	return nil
}
