package cutover

import (
	"testing"

	"github.com/crossfade-io/crossfade/internal/cutover/journal"
)

// TestReplay: what a resumed runner does after a crash between any two journal entries.
func TestReplay(t *testing.T) {
	start := journal.Entry{Kind: kindStart, Step: -1, Weights: map[string]int64{"blue": 100, "green": 0}}
	tests := []struct {
		name    string
		entries []journal.Entry
		want    state
	}{
		{"nothing yet", nil, state{}},
		{"intent of step 2 unconfirmed: redo step 2", []journal.Entry{start, {Kind: kindStepPassed, Step: 0}, {Kind: kindIntent, Step: 1}, {Kind: kindWritten, Step: 1}},
			state{started: true, next: 1}},
		{"step failed, rollback not begun: roll back, never rerun the step", []journal.Entry{start, {Kind: kindStepPassed, Step: 0}, {Kind: kindStepFailed, Step: 1, Detail: "gate x"}},
			state{started: true, next: 1, rollingBack: true, reason: "gate x"}},
		{"abort journaled, rollback not begun: roll back", []journal.Entry{start, {Kind: kindControl, Step: -1, Detail: CommandAbort, By: "alice"}},
			state{started: true, rollingBack: true, reason: "aborted by alice"}},
		{"rollback stop 1 held: go on from stop 2", []journal.Entry{start, {Kind: kindStepFailed, Step: 0, Detail: "g"}, {Kind: kindRollback, Step: -1, Detail: "g"}, {Kind: kindRollbackHeld, Step: 0}},
			state{started: true, rollingBack: true, rollbackNext: 1, reason: "g"}},
		{"paused then resumed, then paused", []journal.Entry{start, {Kind: kindControl, Detail: CommandPause}, {Kind: kindControl, Detail: CommandResume}, {Kind: kindControl, Detail: CommandPause}},
			state{started: true, paused: true}},
		{"promoted", []journal.Entry{start, {Kind: kindControl, Detail: CommandPause}, {Kind: kindControl, Detail: CommandPromote}},
			state{started: true, promoted: true}},
		{"done", []journal.Entry{start, {Kind: kindDone, Step: -1, Detail: outcomeCompleted}}, state{started: true, done: outcomeCompleted}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := replay(tt.entries)
			got.start, got.startedAt = nil, tt.want.startedAt
			if got.started != tt.want.started || got.next != tt.want.next || got.rollingBack != tt.want.rollingBack ||
				got.rollbackNext != tt.want.rollbackNext || got.reason != tt.want.reason || got.paused != tt.want.paused ||
				got.promoted != tt.want.promoted || got.done != tt.want.done {
				t.Errorf("replay = %+v, want %+v", got, tt.want)
			}
		})
	}
}
