package cutover

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/gate"
	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// TestPromoteNeverPassesUnmeasured: under promote, a step still needs every gate to have
// judged it: a gate that cannot measure (connection refused) or has judged nothing yet
// (pending) never passes the last step, however short the promoted hold (TTL 0, as on
// the ALB and Cloud Map). Before, the first such check passed it.
func TestPromoteNeverPassesUnmeasured(t *testing.T) {
	for _, tc := range []struct {
		name  string
		res   gate.Result
		flips bool // the gate judges a pass after some checks
		want  string
	}{
		{"connection refused", gate.Result{Err: "dial tcp 127.0.0.1:1: connection refused", Detail: "no answer"}, false, "rolled-back"},
		{"pending", gate.Result{Pass: true, Pending: true, Detail: "too few requests counted"}, false, "rolled-back"},
		{"pending, then judged", gate.Result{Pass: true, Pending: true, Detail: "too few requests counted"}, true, "completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := fakePlan(time.Hour, 10, 100)
			p.StepTimeout = 200 * time.Millisecond
			if tc.flips {
				p.StepTimeout = time.Minute
			}
			lv := newFakeLever("blue", "green", 100, 0)
			var paths Paths
			g := &scriptGate{name: "g", next: func(s gate.Step, n int) gate.Result {
				if s.Index == 0 {
					if n == 0 {
						// Promote from the first step's hold: the next step is the last.
						if err := SendCommand(paths, Command{Command: CommandPromote, By: "alice"}); err != nil {
							t.Error(err)
						}
					}
					return gate.Result{Pass: true, Detail: "ok"}
				}
				if tc.flips && n >= 4 {
					return gate.Result{Pass: true, Detail: "measured"}
				}
				return tc.res
			}}
			cfg := fakeConfig(t, p, lv, g)
			paths = PathsFor(cfg.StateDir, p.Name)
			rep, err := Run(context.Background(), cfg, false)
			if tc.want == "completed" && err != nil {
				t.Fatalf("run: %v", err)
			}
			var rb *RollbackError
			if tc.want == "rolled-back" && !errors.As(err, &rb) {
				t.Fatalf("run: %v, want the promoted step failed and rolled back", err)
			}
			if rep == nil || rep.Outcome != tc.want {
				t.Fatalf("outcome %v, want %s", rep, tc.want)
			}
			entries, _ := journal.Read(paths.Journal)
			for _, e := range entries {
				if e.Kind == kindStepPassed && e.Step == 1 && strings.Contains(string(e.Data), `"pending":true`) {
					t.Errorf("the last step passed on a pending gate: %s", e.Data)
				}
			}
		})
	}
}

// TestPromoteSkipGates: promote --skip-gates passes the remaining steps without their
// gates, and says so in the journal, the report (text and JSON) and the progress events.
func TestPromoteSkipGates(t *testing.T) {
	p := fakePlan(time.Hour, 10, 50, 100)
	lv := newFakeLever("blue", "green", 100, 0)
	var paths Paths
	g := &scriptGate{name: "g", next: func(s gate.Step, n int) gate.Result {
		if s.Index == 0 && n == 0 {
			if err := SendCommand(paths, Command{Command: CommandPromote, By: "alice", SkipGates: true}); err != nil {
				t.Error(err)
			}
			return gate.Result{Pass: true, Detail: "ok"}
		}
		if s.Index > 0 {
			t.Errorf("gate checked at step %d after promote --skip-gates", s.Index+1)
		}
		return gate.Result{Err: "connection refused"}
	}}
	cfg := fakeConfig(t, p, lv, g)
	paths = PathsFor(cfg.StateDir, p.Name)
	flagged := false
	cfg.Progress = progressHook(func(e Event) { flagged = flagged || e.GatesSkipped })
	rep, err := Run(context.Background(), cfg, false)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.GatesSkipped || !flagged {
		t.Errorf("report GatesSkipped=%t, events flagged=%t; want both", rep.GatesSkipped, flagged)
	}
	var last StepReport
	for _, s := range rep.Steps {
		last = s
	}
	if !last.GatesSkipped || !strings.Contains(last.Detail, "promote --skip-gates from alice") {
		t.Errorf("last step %+v: want it marked as passed with gates skipped, by alice", last)
	}
	var b strings.Builder
	if err := Text.Report(&b, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WARNING: GATES SKIPPED", "!! GATES SKIPPED", "promote --skip-gates by alice"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report text lacks %q:\n%s", want, b.String())
		}
	}
	if st := replay(mustRead(t, paths.Journal)); !st.skipGates || st.skipGatesBy != "alice" {
		t.Errorf("replay: skipGates=%t by %q, want set by alice", st.skipGates, st.skipGatesBy)
	}
	if err := SendCommand(paths, Command{Command: CommandPause, SkipGates: true}); err == nil {
		t.Error("skipGates accepted on a pause")
	}
}

func mustRead(t *testing.T, path string) []journal.Entry {
	t.Helper()
	es, err := journal.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return es
}
