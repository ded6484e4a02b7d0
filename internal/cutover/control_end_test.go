package cutover

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
	"github.com/crossfade-io/crossfade/internal/cutover/spec"
)

// controlEntry returns the control entry journaling the command id, nil when none does.
func controlEntry(entries []journal.Entry, id string) *journal.Entry {
	for i, e := range entries {
		if e.Kind == kindControl && e.ID == id {
			return &entries[i]
		}
	}
	return nil
}

// startedAtOf is the time of the start entry of the journal at path.
func startedAtOf(t *testing.T, path string) time.Time {
	t.Helper()
	st := replay(mustRead(t, path))
	if !st.started {
		t.Fatalf("journal %s has no start entry", path)
	}
	return st.startedAt
}

// leaveCommand writes c into the control directory as a sender that passed its check
// (stamped for the run that started at started) and whose file lands only now would.
func leaveCommand(t *testing.T, paths Paths, c Command, started time.Time) Command {
	t.Helper()
	c.At, c.Started = time.Now().UTC(), started
	c.ID = c.At.Format("20060102150405.000000000") + "-" + c.By
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(paths.Control, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(paths.Control, c.ID+".json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAbortDuringTTLRestoreRollsBack (H1): an abort sent while the last step's TTL is
// being restored (Route 53 takes tens of seconds to INSYNC) is acted on: the cutover is
// not over until its end is journaled, so it rolls back. Before, the run completed at
// 0/100 and the abort, accepted, vanished without a journal entry.
func TestAbortDuringTTLRestoreRollsBack(t *testing.T) {
	p := fakePlan(time.Second, 100)
	p.LowerTTL = 1
	lv := newFakeLever("blue", "green", 100, 0)
	lv.ttl = 2
	cfg := fakeConfig(t, p, lv, &scriptGate{name: "g", next: passing})
	paths := PathsFor(cfg.StateDir, p.Name)
	var once sync.Once
	var sent Command
	var sendErr error
	lv.onTTL = func(ttls map[spec.Record]int64) {
		if ttls[fakeRecord] == 2 {
			once.Do(func() { sent, sendErr = Send(paths, Command{Command: CommandAbort, By: "alice"}) })
		}
	}
	_, err := Run(context.Background(), cfg, false)
	if sendErr != nil {
		t.Fatalf("abort during the TTL's restore refused: %v", sendErr)
	}
	if !errors.Is(err, ErrAborted) {
		t.Fatalf("run: %v, want rolled back on the abort sent during the TTL's restore", err)
	}
	if w := lv.weights(); w["blue"] != 100 || w["green"] != 0 {
		t.Errorf("weights %v after the abort, want blue=100 green=0", w)
	}
	entries := mustRead(t, paths.Journal)
	if e := controlEntry(entries, sent.ID); e == nil || e.Detail != CommandAbort {
		t.Errorf("the abort's journal entry: %+v, want it acted on", e)
	}
	if st := replay(entries); st.done != outcomeRolledBack {
		t.Errorf("outcome %q, want rolled-back", st.done)
	}
}

// TestCommandsWaitingAtTheEndAreJournaled (H1): a command that lands after the runner's
// last check, as the cutover ends, is journaled as ignored with the outcome, and its file
// removed; WaitAck reports it ignored (an abort of a cutover that rolled back: acted on).
// One that lands after the runner has gone is reported alike, and removed. Before, the
// end deleted such commands without a trace.
func TestCommandsWaitingAtTheEndAreJournaled(t *testing.T) {
	for _, tc := range []struct {
		name      string
		gate      func(gate.Step, int) gate.Result
		command   string
		outcome   string
		wantState AckState
	}{
		{"pause as it completes", passing, CommandPause, outcomeCompleted, AckIgnored},
		{"abort as it completes", passing, CommandAbort, outcomeCompleted, AckIgnored},
		{"abort as it rolls back", func(gate.Step, int) gate.Result { return gate.Result{Detail: "5xx"} }, CommandAbort, outcomeRolledBack, AckActedOn},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakePlan(0, 50, 100)
			lv := newFakeLever("blue", "green", 100, 0)
			cfg := fakeConfig(t, p, lv, &scriptGate{name: "g", next: tc.gate})
			paths := PathsFor(cfg.StateDir, p.Name)
			var late Command
			cfg.Progress = progressHook(func(e Event) {
				if e.Phase == PhaseDone {
					late = leaveCommand(t, paths, Command{Command: tc.command, By: "alice"}, startedAtOf(t, paths.Journal))
				}
			})
			if _, err := Run(context.Background(), cfg, false); (err == nil) != (tc.outcome == outcomeCompleted) {
				t.Fatalf("run: %v", err)
			}
			e := controlEntry(mustRead(t, paths.Journal), late.ID)
			want := tc.command + " ignored: the cutover had ended (" + tc.outcome + ")"
			if e == nil || e.Detail != want {
				t.Fatalf("journal entry of the command left at the end: %+v, want %q", e, want)
			}
			if cmds, _ := readCommands(paths.Control); len(cmds) != 0 {
				t.Errorf("%d commands left in %s", len(cmds), paths.Control)
			}
			ack, err := WaitAck(context.Background(), paths, late, time.Minute)
			if err != nil || ack.State != tc.wantState {
				t.Errorf("WaitAck: %+v, %v; want state %d", ack, err, tc.wantState)
			}
			if tc.wantState == AckIgnored && !strings.Contains(ack.Why, "the cutover had ended ("+tc.outcome+")") {
				t.Errorf("WaitAck says %q, want the end named", ack.Why)
			}
			// Landing once the runner has gone: nobody journals it; WaitAck says so and
			// removes it.
			orphan := leaveCommand(t, paths, Command{Command: tc.command, By: "bob"}, startedAtOf(t, paths.Journal))
			ack, err = WaitAck(context.Background(), paths, orphan, time.Minute)
			if err != nil || ack.State != tc.wantState {
				t.Errorf("WaitAck of a command left after the runner went: %+v, %v; want state %d", ack, err, tc.wantState)
			}
			if cmds, _ := readCommands(paths.Control); len(cmds) != 0 {
				t.Errorf("the orphan command's file is still in %s", paths.Control)
			}
		})
	}
}

// TestCommandStampedForThisRunIsActedOn (L1): a command is judged by the run it was
// checked against, not by its time: one timed before the start entry (its sender read the
// clock, then the journal, as the start entry landed) but checked against this run's start
// is acted on. Before, poll discarded it although its sender was told it was sent.
func TestCommandStampedForThisRunIsActedOn(t *testing.T) {
	p := fakePlan(0, 10, 50, 100)
	lv := newFakeLever("blue", "green", 100, 0)
	cfg := fakeConfig(t, p, lv, nil)
	paths := PathsFor(cfg.StateDir, p.Name)
	var sent Command
	var sendErr error
	cfg.NewGate = func(spec.Gate) (Gate, error) {
		return &scriptGate{name: "g", next: func(_ gate.Step, n int) gate.Result {
			if n == 0 {
				sent, sendErr = Send(paths, Command{Command: CommandPromote, By: "alice", At: time.Now().Add(-time.Hour).UTC()})
			}
			return gate.Result{Pass: true, Detail: "ok"}
		}}, nil
	}
	if _, err := Run(context.Background(), cfg, false); err != nil || sendErr != nil {
		t.Fatalf("run: %v, send: %v", err, sendErr)
	}
	if e := controlEntry(mustRead(t, paths.Journal), sent.ID); e == nil || e.Detail != CommandPromote {
		t.Fatalf("the promote's journal entry: %+v, want it acted on", e)
	}
	var wrote []int64
	for _, w := range lv.writes {
		wrote = append(wrote, w["green"])
	}
	if !slices.Equal(wrote, []int64{10, 100}) {
		t.Errorf("green weights written %v, want [10 100]: the promote skipped step 2", wrote)
	}
}

// TestStaleCommandsSurviveAFailedStart (L4): a run that fails before its start entry leaves
// the commands it found for the next run, which discards them, journaled. Before, the
// failed run removed them and they were only logged.
func TestStaleCommandsSurviveAFailedStart(t *testing.T) {
	p := fakePlan(0, 50, 100)
	lv := newFakeLever("blue", "green", 100, 0)
	lv.problems = []string{"green: no such record set"}
	cfg := fakeConfig(t, p, lv, &scriptGate{name: "g", next: passing})
	paths := PathsFor(cfg.StateDir, p.Name)
	writeCommand(t, paths, Command{Command: CommandPromote, By: "alice", At: time.Now().Add(-time.Hour).UTC()})
	var nr *NotReadyError
	if _, err := Run(context.Background(), cfg, false); !errors.As(err, &nr) {
		t.Fatalf("first run: %v, want refused as not ready", err)
	}
	if cmds, _ := readCommands(paths.Control); len(cmds) != 1 {
		t.Fatalf("%d commands left after a failed start, want the 1 found", len(cmds))
	}
	lv.mu.Lock()
	lv.problems = nil
	lv.mu.Unlock()
	if _, err := Run(context.Background(), cfg, false); err != nil {
		t.Fatal(err)
	}
	var discarded []string
	for _, e := range mustRead(t, paths.Journal) {
		if e.Kind == kindControl {
			discarded = append(discarded, e.Detail+" by "+e.By)
		}
	}
	if want := []string{CommandPromote + discardedSuffix + " by alice"}; !slices.Equal(discarded, want) {
		t.Errorf("control entries %q, want %q", discarded, want)
	}
}

// TestGatelessStepsWarned (L5): a step with no gates passes on its pause alone; `plan`
// warns of it, and so does `run` when it starts.
func TestGatelessStepsWarned(t *testing.T) {
	p := fakePlan(0, 50, 100)
	p.Steps[1].Gates = nil
	lv := newFakeLever("blue", "green", 100, 0)
	cfg := fakeConfig(t, p, lv, &scriptGate{name: "g", next: passing})
	const want = "step 2 has no gates: it passes on its pause alone"
	pv, err := DryRun(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pv.Warnings, want) || slices.ContainsFunc(pv.Warnings, func(w string) bool { return strings.Contains(w, "step 1") }) {
		t.Errorf("plan warnings %q, want only %q", pv.Warnings, want)
	}
	var summary strings.Builder
	if err := Text.PreviewSummary(&summary, pv); err != nil || !strings.Contains(summary.String(), "warning: "+want) {
		t.Errorf("plan summary lacks the warning (%v):\n%s", err, summary.String())
	}
	var logs bytes.Buffer
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	if _, err := Run(context.Background(), cfg, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), want) {
		t.Errorf("run's logs lack %q:\n%s", want, logs.String())
	}
}

// TestSkipGatesKeepsThePrecheck (M3): promote --skip-gates skips the gates' measurement,
// not the check before a write: a step whose target group has no healthy target is not
// written, and the cutover rolls back. Before, --skip-gates skipped it too and moved all
// the traffic onto the group.
func TestSkipGatesKeepsThePrecheck(t *testing.T) {
	p := fakePlan(0, 10, 100)
	p.Steps[1].Gates = []spec.Gate{{Name: "health"}}
	lv := newFakeLever("blue", "green", 100, 0)
	cfg := fakeConfig(t, p, lv, nil)
	paths := PathsFor(cfg.StateDir, p.Name)
	var sendErr error
	cfg.NewGate = func(g spec.Gate) (Gate, error) {
		if g.Name == "health" {
			return &precheckGate{scriptGate: scriptGate{name: "health", next: passing},
				pre: func(int) gate.Result { return gate.Result{Detail: "target group green has no healthy target"} }}, nil
		}
		return &scriptGate{name: g.Name, next: func(_ gate.Step, n int) gate.Result {
			if n == 0 {
				sendErr = SendCommand(paths, Command{Command: CommandPromote, SkipGates: true, By: "alice"})
			}
			return gate.Result{Pass: true, Detail: "ok"}
		}}, nil
	}
	_, err := Run(context.Background(), cfg, false)
	if sendErr != nil {
		t.Fatal(sendErr)
	}
	var rb *RollbackError
	if !errors.As(err, &rb) || rb.Step != 1 || !strings.Contains(rb.Reason, "no healthy target") {
		t.Fatalf("run: %v, want step 2 failed by its check before the write", err)
	}
	for _, w := range lv.writes {
		if w["green"] == 100 {
			t.Errorf("step 2 (green=100) written under --skip-gates onto a group with no healthy target (writes %v)", lv.writes)
		}
	}
}

// TestGateErrorSaidOnce (E3): a gate that cannot measure, and puts its error in its detail
// too, is named once in the step's failure, not "err (err)".
func TestGateErrorSaidOnce(t *testing.T) {
	const msg = "query 127.0.0.1:53: connection refused"
	p := fakePlan(0, 100)
	lv := newFakeLever("blue", "green", 100, 0)
	cfg := fakeConfig(t, p, lv, &scriptGate{name: "g", next: func(gate.Step, int) gate.Result {
		return gate.Result{Detail: msg, Err: msg}
	}})
	_, err := Run(context.Background(), cfg, false)
	var rb *RollbackError
	if !errors.As(err, &rb) {
		t.Fatalf("run: %v, want a rollback", err)
	}
	if n := strings.Count(rb.Reason, msg); n != 1 {
		t.Errorf("reason %q says the gate's error %d times, want once", rb.Reason, n)
	}
}

// TestReportShowsWhenADiscardedCommandWasSent (E4): the report shows when a discarded
// command was sent, not when a later run read it.
func TestReportShowsWhenADiscardedCommandWasSent(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	sent := t0.Add(-26 * time.Hour)
	c := Command{ID: "1", Command: CommandPromote, By: "alice", At: sent}
	discarded := c.entry(c.detail() + discardedSuffix)
	discarded.Time = t0.Add(time.Second)
	acted := Command{ID: "2", Command: CommandPause, By: "bob", At: t0}.entry(CommandPause)
	acted.Time = t0.Add(2 * time.Second)
	rep := BuildReport("app", []journal.Entry{{Kind: kindStart, Time: t0, By: "carol"}, discarded, acted})
	var b strings.Builder
	if err := Text.Report(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"promote discarded: sent before this run started by alice, sent at " + sent.Format(time.RFC3339),
		"pause by bob at " + acted.Time.Format(time.RFC3339),
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// TestAbortRefusedAsEveryCommand (D1): an abort of a cutover that has not started, or has
// ended, is refused by the one check every control command goes through, naming why.
func TestAbortRefusedAsEveryCommand(t *testing.T) {
	start := journal.Entry{Kind: kindStart, Step: stepNone, Weights: map[string]int64{"blue": 100, "green": 0}}
	for _, tc := range []struct {
		name    string
		entries []journal.Entry // nil: no journal
		want    string
	}{
		{"no journal", nil, "it has not run here: no journal at"},
		{"no start entry", []journal.Entry{}, "it has not started: its journal"},
		{"ended", []journal.Entry{start, {Kind: kindDone, Step: stepNone, Detail: outcomeCompleted}}, "it has ended (completed)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakePlan(0, 100)
			cfg := fakeConfig(t, p, newFakeLever("blue", "green", 100, 0), &scriptGate{name: "g", next: passing})
			paths := PathsFor(cfg.StateDir, p.Name)
			if tc.entries != nil {
				seedJournal(t, paths.Journal, tc.entries)
			}
			_, err := Abort(context.Background(), cfg)
			var refused *CommandRefusedError
			if !errors.As(err, &refused) || !strings.Contains(err.Error(), "cutover app: abort refused: "+tc.want) {
				t.Errorf("abort: %v, want refused naming %q", err, tc.want)
			}
		})
	}
}

// TestRollbackStopAnswersCommands: while a gradual rollback holds a stop, a command is
// answered (journaled as ignored: the rollback runs to its end) at the next check, not when
// the stop's hold ends: a second `abort` sent then must learn within its --ack-timeout that
// the rollback is under way. Before, the stop slept its whole hold first.
func TestRollbackStopAnswersCommands(t *testing.T) {
	p := fakePlan(time.Millisecond, 10, 50)
	p.Rollback = spec.PlanRollback{Mode: spec.RollbackGradual, Steps: []spec.Weights{{From: 80, To: 20}}, Pause: 3 * time.Second}
	lv := newFakeLever("blue", "green", 100, 0)
	failAt50 := &scriptGate{name: "g", next: func(s gate.Step, _ int) gate.Result {
		if s.Weights["green"] == 50 {
			return gate.Result{Detail: "green fails at 50"}
		}
		return gate.Result{Pass: true}
	}}
	cfg := fakeConfig(t, p, lv, failAt50)
	cfg.CheckInterval = 20 * time.Millisecond
	paths := PathsFor(cfg.StateDir, p.Name)
	acks := make(chan time.Duration, 1)
	var once sync.Once
	lv.onWrite = func(w map[string]int64) {
		if w["green"] != 20 {
			return
		}
		once.Do(func() {
			go func() {
				sent := time.Now()
				c, err := Send(paths, Command{Command: CommandAbort, By: "bob"})
				if err != nil {
					t.Errorf("abort during the rollback stop refused: %v", err)
					acks <- -1
					return
				}
				ack, err := WaitAck(context.Background(), paths, c, 2*time.Second)
				if err != nil || ack.State != AckActedOn {
					t.Errorf("abort during the rollback's 3s stop: %+v, %v; want it acted on (the rollback is under way) at a check", ack, err)
				}
				acks <- time.Since(sent)
			}()
		})
	}
	if _, err := Run(context.Background(), cfg, false); err == nil {
		t.Fatal("run passed a step whose gate failed")
	}
	select {
	case d := <-acks:
		if d >= 0 && d >= 2*time.Second {
			t.Errorf("the abort was answered after %s, within the stop's 3s hold only at its end", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the abort sent during the rollback stop was never answered")
	}
}
