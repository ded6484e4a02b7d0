package cutover

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
)

// precheckGate is a gate that judges a step before its write too (as gate.TargetHealth
// does): its prechecks answer pre(n), n counting them from 0; its checks pass.
type precheckGate struct {
	scriptGate
	pre func(n int) gate.Result
	n   atomic.Int64
}

func (g *precheckGate) Precheck(_ context.Context, _ gate.Step) gate.Result {
	res := g.pre(int(g.n.Add(1) - 1))
	res.Gate = g.name
	return res
}

// TestPrecheckPendingNeverWrites: a step never shifts traffic on an unjudged precheck. A
// gate that has not judged before the write (pending) holds the write, nothing written,
// and is checked again: the step is written once it judges a pass, fails (nothing
// written, rolled back) at the step's time limit if it never does, and an abort meanwhile
// rolls back with nothing written. Before, a pending precheck let the write through at
// once.
func TestPrecheckPendingNeverWrites(t *testing.T) {
	pending := gate.Result{Pass: true, Pending: true, Detail: "no target registered yet"}
	for _, tc := range []struct {
		name string
		// judgeAt is the precheck that judges a pass (-1: none); abortAt the one that
		// sends an abort (-1: none).
		judgeAt, abortAt int
		want             string
	}{
		{"never judges", -1, -1, "rolled-back"},
		{"judges at the fourth check", 3, -1, "completed"},
		{"aborted while waiting", -1, 2, "aborted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakePlan(time.Millisecond, 10, 100)
			p.StepTimeout = 200 * time.Millisecond
			if tc.want == "completed" {
				p.StepTimeout = time.Minute
			}
			lv := newFakeLever("blue", "green", 100, 0)
			var paths Paths
			g := &precheckGate{scriptGate: scriptGate{name: "g", next: passing}}
			g.pre = func(n int) gate.Result {
				if n == tc.abortAt {
					if err := SendCommand(paths, Command{Command: CommandAbort, By: "alice"}); err != nil {
						t.Error(err)
					}
				}
				if tc.judgeAt >= 0 && n >= tc.judgeAt {
					return gate.Result{Pass: true, Detail: "2 healthy of 2 targets"}
				}
				return pending
			}
			var prechecksAtFirstWrite atomic.Int64
			prechecksAtFirstWrite.Store(-1)
			lv.onWrite = func(w map[string]int64) {
				if w["green"] > 0 {
					prechecksAtFirstWrite.CompareAndSwap(-1, g.n.Load())
				}
			}
			cfg := fakeConfig(t, p, lv, g)
			paths = PathsFor(cfg.StateDir, p.Name)
			var events []Event
			cfg.Progress = progressHook(func(ev Event) { events = append(events, ev) })
			rep, err := Run(context.Background(), cfg, false)
			var rb *RollbackError
			switch tc.want {
			case "completed":
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				if n := prechecksAtFirstWrite.Load(); n < int64(tc.judgeAt)+1 {
					t.Errorf("step 1 written after %d prechecks, before the gate judged (at precheck %d)", n, tc.judgeAt+1)
				}
			case "rolled-back":
				if !errors.As(err, &rb) {
					t.Fatalf("run: %v, want the step failed at its time limit and rolled back", err)
				}
				for _, want := range []string{"gate g has not judged before the write: no target registered yet", "nothing written", "the step's time limit"} {
					if !strings.Contains(rb.Reason, want) {
						t.Errorf("rollback reason %q lacks %q", rb.Reason, want)
					}
				}
				if g.n.Load() < 2 {
					t.Errorf("%d prechecks: the pending gate was not checked again", g.n.Load())
				}
			case "aborted":
				if !errors.Is(err, ErrAborted) {
					t.Fatalf("run: %v, want aborted", err)
				}
			}
			if tc.want != "completed" {
				if n := prechecksAtFirstWrite.Load(); n >= 0 {
					t.Errorf("traffic shifted to green after %d pending prechecks: writes %v", n, lv.writes)
				}
				if rep == nil || rep.Outcome != outcomeRolledBack {
					t.Errorf("outcome %+v, want rolled-back", rep)
				}
			}
			said := false
			for _, ev := range events {
				if ev.Phase == PhaseWriting && strings.Contains(ev.Message, "gate g has not judged before the write") &&
					strings.Contains(ev.Message, "nothing written, checking again") {
					said = true
				}
			}
			if !said {
				t.Errorf("no progress event said the write waits on the gate: %+v", events)
			}
		})
	}
}
