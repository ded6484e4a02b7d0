package cutover

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// TestReplay: what a resumed runner does after a crash between any two journal entries.
func TestReplay(t *testing.T) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	start := journal.Entry{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}, Time: t0, TTL: 60}
	stops, _ := json.Marshal([]map[string]int64{{"blue": 50, "green": 50}, {"blue": 100, "green": 0}})
	driftPause, _ := json.Marshal(driftData{Action: "pause"})
	driftRollback, _ := json.Marshal(driftData{Action: "rollback"})
	tests := []struct {
		name    string
		entries []journal.Entry
		want    string
	}{
		{"nothing yet", nil, "started=false next=0 rollback=none paused=false promoted=false done="},
		{"intent of step 2 unconfirmed: redo step 2", []journal.Entry{start, {Kind: kindStepPassed, Step: 0}, {Kind: kindIntent, Step: 1}, {Kind: kindWritten, Step: 1}},
			"started=true next=1 rollback=none paused=false promoted=false done="},
		{"step failed, rollback not begun: roll back, never rerun the step", []journal.Entry{start, {Kind: kindStepPassed, Step: 0}, {Kind: kindStepFailed, Step: 1, Detail: "gate x"}},
			"started=true next=1 rollback={step 1 \"gate x\" aborted=false begun=false from=0 stops=0} paused=false promoted=false done="},
		{"abort journaled, rollback not begun: roll back", []journal.Entry{start, {Kind: kindStepPassed, Step: 0}, {Kind: kindControl, Step: -1, Detail: CommandAbort, By: "alice"}},
			"started=true next=1 rollback={step 1 \"aborted by alice\" aborted=true begun=false from=0 stops=0} paused=false promoted=false done="},
		{"rollback stop 1 held: go on from stop 2 of the journaled stops", []journal.Entry{start, {Kind: kindStepFailed, Step: 0, Detail: "g"}, {Kind: kindRollback, Step: 0, Detail: "g", Data: stops}, {Kind: kindRollbackHeld, Step: 0}},
			"started=true next=0 rollback={step 0 \"g\" aborted=false begun=true from=1 stops=2} paused=false promoted=false done="},
		{"commands during a rollback are ignored", []journal.Entry{start, {Kind: kindStepFailed, Step: 0, Detail: "g"}, {Kind: kindControl, Detail: CommandPause + ignoredSuffix}, {Kind: kindControl, Detail: CommandAbort + ignoredSuffix}},
			"started=true next=0 rollback={step 0 \"g\" aborted=false begun=false from=0 stops=0} paused=false promoted=false done="},
		{"paused then resumed, then paused", []journal.Entry{start, {Kind: kindControl, Detail: CommandPause, Time: at(10)}, {Kind: kindControl, Detail: CommandResume, Time: at(40)}, {Kind: kindControl, Detail: CommandPause, Time: at(50)}},
			"started=true next=0 rollback=none paused=true promoted=false done= pausedFor=30s"},
		{"promoted while paused", []journal.Entry{start, {Kind: kindControl, Detail: CommandPause, Time: at(10)}, {Kind: kindControl, Detail: CommandPromote, Time: at(15)}},
			"started=true next=0 rollback=none paused=false promoted=true done= pausedFor=5s"},
		{"drift paused it: still paused", []journal.Entry{start, {Kind: kindStepPassed, Step: 0}, {Kind: kindDrift, Step: 1, Data: driftPause, Time: at(10)}},
			"started=true next=1 rollback=none paused=true promoted=false done="},
		{"drift paused it, then resumed", []journal.Entry{start, {Kind: kindDrift, Step: 0, Data: driftPause, Time: at(10)}, {Kind: kindControl, Detail: CommandResume, Time: at(25)}},
			"started=true next=0 rollback=none paused=false promoted=false done= pausedFor=15s"},
		{"drift with onDrift rollback, step failed: roll back", []journal.Entry{start, {Kind: kindDrift, Step: 0, Data: driftRollback}, {Kind: kindStepFailed, Step: 0, Detail: "weights drifted"}},
			"started=true next=0 rollback={step 0 \"weights drifted\" aborted=false begun=false from=0 stops=0} paused=false promoted=false done="},
		{"done", []journal.Entry{start, {Kind: kindDone, Step: -1, Detail: outcomeCompleted}}, "started=true next=0 rollback=none paused=false promoted=false done=completed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := replay(tt.entries)
			rb := "none"
			if d := st.rollback; d != nil {
				rb = fmt.Sprintf("{step %d %q aborted=%t begun=%t from=%d stops=%d}", d.step, d.reason, d.aborted, d.begun, d.from, len(d.stops))
			}
			got := fmt.Sprintf("started=%t next=%d rollback=%s paused=%t promoted=%t done=%s", st.started, st.next, rb, st.paused, st.promoted, st.done)
			if st.pausedFor > 0 {
				got += fmt.Sprintf(" pausedFor=%s", st.pausedFor)
			}
			if got != tt.want {
				t.Errorf("replay =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}

// TestReplayOutcome: a finished cutover's resume returns what the run returned.
func TestReplayOutcome(t *testing.T) {
	start := journal.Entry{Kind: kindStart, Step: -1}
	failed := replay([]journal.Entry{start, {Kind: kindStepFailed, Step: 2, Detail: "gate g"}, {Kind: kindDone, Detail: outcomeRolledBack}})
	if rb, ok := failed.outcomeErr().(*RollbackError); !ok || rb.Step != 2 || rb.Reason != "gate g" {
		t.Errorf("rolled back after a failure: %v", failed.outcomeErr())
	}
	aborted := replay([]journal.Entry{start, {Kind: kindControl, Detail: CommandAbort, By: "a"}, {Kind: kindDone, Detail: outcomeRolledBack}})
	if aborted.outcomeErr() != ErrAborted {
		t.Errorf("rolled back on abort: %v", aborted.outcomeErr())
	}
	if err := replay([]journal.Entry{start, {Kind: kindDone, Detail: outcomeCompleted}}).outcomeErr(); err != nil {
		t.Errorf("completed: %v", err)
	}
}
